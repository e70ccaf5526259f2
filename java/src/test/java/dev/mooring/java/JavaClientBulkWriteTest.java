package dev.mooring.java;

import dev.mooring.cmap.CommandStartedEvent;
import dev.mooring.driver.ClientBulkWriteException;
import dev.mooring.driver.ClientBulkWriteOptions;
import dev.mooring.driver.ClientBulkWriteResult;
import dev.mooring.driver.ClientNamespacedWriteModel;
import dev.mooring.driver.WriteModel;
import dev.mooring.testkit.server.InMemoryCollections;
import dev.mooring.testkit.server.WireServer;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlinx.coroutines.BuildersKt;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** JavaMongoCluster.bulkWrite (the client bulk write) against the test kit's MongoDB 8.0 server, through the facade's API only. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaClientBulkWriteTest {
    private WireServer server;
    private String uri;

    @BeforeEach
    void startServer() throws InterruptedException {
        // the test kit's start suspends: run it to completion on this thread
        server = BuildersKt.runBlocking(EmptyCoroutineContext.INSTANCE,
                (scope, continuation) -> WireServer.Companion.start(null, 0, null, new InMemoryCollections(), continuation));
        server.setMaxWireVersion(25); // MongoDB 8.0, which has the bulkWrite command
        uri = "mongodb://" + server.getAddress() + "/?serverSelectionTimeoutMS=10000";
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    @Test
    void typedAndDocumentModelsOnSeveralNamespacesInOneCommand() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            List<CommandStartedEvent> started = CollectionTestSupport.recordCommands(cluster);
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            List<ClientNamespacedWriteModel<?>> models = List.of(
                    WriteModels.on(cities, WriteModels.insertOne(new City("Oslo", 700_000))),
                    ClientNamespacedWriteModel.of("geo.log", new WriteModel.InsertOne<>(BsonDocument.parse("{_id: 1, event: 'added'}"))),
                    WriteModels.on(cities, WriteModels.deleteOne(BsonDocument.parse("{_id: 'Nowhere'}"))));
            ClientBulkWriteResult r = cluster.bulkWrite(models, new ClientBulkWriteOptions(true, null, null, null, null, true, null)).join();
            ClientBulkWriteResult.Acknowledged ack = assertInstanceOf(ClientBulkWriteResult.Acknowledged.class, r);
            assertEquals(2, ack.getInsertedCount());
            assertEquals(0, ack.getDeletedCount());
            assertEquals(List.of(0, 1), List.copyOf(ack.getVerboseResults().getInsertResults().keySet()));
            BsonDocument sent = started.stream().filter(e -> e.getCommandName().equals("bulkWrite")).findFirst().orElseThrow().getCommand();
            assertEquals(2, sent.getArray("nsInfo").size());
            assertEquals(1L, cities.countDocuments(new BsonDocument()).join());
        }
    }

    @Test
    void writeErrorsFailTheFutureWithClientBulkWriteException() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            List<ClientNamespacedWriteModel<?>> models = List.of(
                    ClientNamespacedWriteModel.of("db.items", new WriteModel.InsertOne<>(new BsonDocument("_id", new BsonInt32(1)))),
                    ClientNamespacedWriteModel.of("db.items", new WriteModel.InsertOne<>(new BsonDocument("_id", new BsonInt32(1)))));
            CompletionException e = assertThrows(CompletionException.class, () -> cluster.bulkWrite(models).join());
            ClientBulkWriteException error = assertInstanceOf(ClientBulkWriteException.class, e.getCause());
            assertEquals(11000, error.getWriteErrors().get(1).getCode());
            assertEquals(1, error.getPartialResult().getInsertedCount());
        }
    }
}
