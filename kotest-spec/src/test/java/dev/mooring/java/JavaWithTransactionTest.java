package dev.mooring.java;

import dev.mooring.cmap.CommandStartedEvent;
import dev.mooring.sdam.ClientSession;
import dev.mooring.testkit.replset.ReplicaSetSimulator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The Java facade's withTransaction against the test kit's replica set (whose transactions keep writes invisible until commit). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaWithTransactionTest {

    private static BsonDocument insert(int id) {
        return new BsonDocument("insert", new BsonString("c"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id)))));
    }

    private static int count(JavaMongoCluster cluster) {
        return cluster.runCommand("db", new BsonDocument("find", new BsonString("c"))).join()
                .getDocument("cursor").getArray("firstBatch").size();
    }

    @Test
    void commitsTheFunctionsWritesAndAbortsWhenItsStageFails() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSet(1)) {
            try (JavaMongoCluster cluster = MongoClusters.create(rs.seedUri("", rs.getMembers().get(0)))) {
                AtomicReference<ClientSession> used = new AtomicReference<>();
                String result = cluster.<String>withTransaction(session -> {
                    used.set(session);
                    return cluster.runRetryableWrite("db", insert(1), session)
                            .thenCompose(r -> cluster.runRetryableWrite("db", insert(2), session))
                            .thenApply(r -> "done");
                }).join();
                assertEquals("done", result);
                assertEquals(2, count(cluster));
                assertEquals(true, used.get().isEnded());

                CompletionException failed = assertThrows(CompletionException.class, () -> cluster.<String>withTransaction(session ->
                        cluster.runRetryableWrite("db", insert(3), session)
                                .thenCompose(r -> CompletableFuture.<String>failedFuture(new IllegalStateException("boom")))).join());
                assertEquals(IllegalStateException.class, failed.getCause().getClass());
                assertEquals(2, count(cluster)); // the aborted transaction's insert is not applied
            }
        }
    }

    @Test
    void cancellingTheFutureWhileTheFunctionsStageRunsAbortsTheTransaction() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSet(1)) {
            List<String> commands = new CopyOnWriteArrayList<>();
            ClusterSettingsBuilder settings = MongoClusters.settingsBuilder(rs.seedUri("", rs.getMembers().get(0)))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            commands.add(event.getCommandName());
                        }
                    });
            try (JavaMongoCluster cluster = MongoClusters.create(settings)) {
                CountDownLatch inserted = new CountDownLatch(1);
                CompletableFuture<String> never = new CompletableFuture<>();
                CompletableFuture<String> result = cluster.withTransaction(session ->
                        cluster.runRetryableWrite("db", insert(7), session).thenCompose(r -> {
                            inserted.countDown();
                            return never;
                        }));
                Await.until("the function's insert ran", () -> inserted.getCount() == 0);
                result.cancel(true);
                Await.until("the transaction was aborted", () -> commands.contains("abortTransaction"));
                assertEquals(false, commands.contains("commitTransaction"));
                assertEquals(0, count(cluster)); // the cancelled transaction's insert is not applied
            }
        }
    }
}
