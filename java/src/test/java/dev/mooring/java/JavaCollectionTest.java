package dev.mooring.java;

import dev.mooring.cmap.CommandStartedEvent;
import dev.mooring.driver.BulkWriteResult;
import dev.mooring.driver.DeleteResult;
import dev.mooring.driver.DocumentDecodingException;
import dev.mooring.driver.InsertManyResult;
import dev.mooring.driver.MongoBulkWriteException;
import dev.mooring.driver.MongoWriteException;
import dev.mooring.driver.ReturnDocument;
import dev.mooring.driver.Update;
import dev.mooring.driver.UpdateResult;
import dev.mooring.driver.WriteModel;
import dev.mooring.sdam.MongoClusterClosedException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** JavaMongoDatabase / JavaMongoCollection against mongo-java-server, through the facade's API only. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaCollectionTest extends CollectionTestSupport {

    private static BsonDocument doc(String json) {
        return BsonDocument.parse(json);
    }

    private static <T> List<T> all(java.util.concurrent.Flow.Publisher<T> publisher) {
        Recorder<T> r = new Recorder<>();
        publisher.subscribe(r);
        r.subscription.request(Long.MAX_VALUE);
        awaitUntil("the end of the publisher", r::ended);
        if (r.error.get() != null) throw new AssertionError("the publisher failed", r.error.get());
        return List.copyOf(r.received);
    }

    @Test
    void recordsRoundTripThroughTheDefaultRegistry() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            assertEquals(City.class, cities.getDocumentClass());
            assertEquals("geo.cities", cities.getNamespace());

            InsertManyResult inserted = cities.insertMany(List.of(new City("Oslo", 700_000), new City("Bergen", 285_000), new City("Tromsø", 77_000))).join();
            assertEquals(new BsonString("Bergen"), inserted.getInsertedIds().get(1)); // the record's @BsonId component is the _id

            List<City> big = all(cities.find(doc("{population: {$gt: 100000}}"), new FindOptionsBuilder().sort(doc("{population: 1}")).build()));
            assertEquals(List.of(new City("Bergen", 285_000), new City("Oslo", 700_000)), big);
            // stored as plain BSON fields
            BsonDocument raw = all(cluster.getDatabase("geo").getCollection("cities").find(doc("{_id: 'Oslo'}"))).get(0);
            assertEquals(doc("{_id: 'Oslo', population: {$numberLong: '700000'}}"), raw);

            assertEquals(2L, cities.countDocuments(doc("{population: {$lt: 300000}}")).join());
            City before = cities.findOneAndUpdate(doc("{_id: 'Tromsø'}"), doc("{$inc: {population: 1000}}")).join();
            assertEquals(new City("Tromsø", 77_000), before);
            City after = cities.findOneAndUpdate(doc("{_id: 'Tromsø'}"), new Update.Operators(doc("{$inc: {population: 1}}")),
                    new FindOneAndUpdateOptionsBuilder().returnDocument(ReturnDocument.AFTER).build(), null).join();
            assertEquals(new City("Tromsø", 78_001), after);
            assertEquals(new UpdateResult.Acknowledged(1, 1, null), cities.replaceOne(doc("{_id: 'Oslo'}"), new City("Oslo", 710_000)).join());
            assertEquals(new City("Bergen", 285_000), cities.findOneAndDelete(doc("{_id: 'Bergen'}")).join());
            // upserts through the Java options builders
            assertEquals(new UpdateResult.Acknowledged(0, 0, new BsonString("Bodø")), cities.updateOne(doc("{_id: 'Bodø'}"),
                    new Update.Operators(doc("{$set: {population: 52000}}")), new UpdateOptionsBuilder().upsert(true).build(), null).join());
            assertEquals(new City("Bodø", 53_000), cities.findOneAndReplace(doc("{_id: 'Bodø'}"), new City("Bodø", 53_000),
                    new FindOneAndReplaceOptionsBuilder().returnDocument(ReturnDocument.AFTER).build(), null).join());
            assertEquals(new DeleteResult.Acknowledged(1), cities.deleteOne(doc("{_id: 'Bodø'}")).join());
            assertNull(cities.findOneAndDelete(doc("{_id: 'Bergen'}")).join(), "none matched: null");
            assertEquals(List.of("Oslo", "Tromsø"), all(cities.aggregate(List.of(doc("{$sort: {_id: 1}}")))).stream().map(City::name).collect(Collectors.toList()));

            CompletionException duplicate = assertThrows(CompletionException.class, () -> cities.insertOne(new City("Oslo", 1)).join());
            assertEquals(11000, assertInstanceOf(MongoWriteException.class, duplicate.getCause()).getCode());
        }
    }

    @Test
    void pojosRoundTripAndUndecodableDocumentsAreNamed() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoDatabase db = cluster.getDatabase("app");
            JavaMongoCollection<Person> people = db.getCollection("people", Person.class);
            Person ada = new Person("Ada", 36, List.of("math", "engines"));
            assertEquals(1, ((dev.mooring.driver.InsertOneResult.Acknowledged) people.insertOne(ada).join()).getInsertedId().isObjectId() ? 1 : 0);
            people.insertOne(new Person("Grace", 45, List.of("cobol"))).join();

            List<Person> found = all(people.find(doc("{age: {$lt: 40}}")));
            assertEquals(1, found.size());
            assertTrue(found.get(0).sameAs(ada), found.toString());
            assertTrue(found.get(0).getId() != null, "the generated _id is decoded into the POJO's id");

            assertEquals(new UpdateResult.Acknowledged(1, 1, null), people.updateOne(doc("{name: 'Grace'}"), doc("{$set: {age: 46}}")).join());
            assertEquals(List.of(new BsonInt32(36), new BsonInt32(46)), people.distinct("age").join().stream().sorted((a, b) -> Integer.compare(a.asInt32().getValue(), b.asInt32().getValue())).collect(Collectors.toList()));
            assertEquals(2L, people.estimatedDocumentCount().join());

            // the same collection seen as BSON documents, and a document the POJO codec cannot read
            JavaMongoCollection<BsonDocument> raw = db.getCollection("people");
            raw.insertOne(doc("{name: 'Bad', age: 'not a number'}")).join();
            java.util.concurrent.Flow.Publisher<Person> bad = people.find(doc("{name: 'Bad'}"));
            Recorder<Person> r = new Recorder<>();
            bad.subscribe(r);
            r.subscription.request(1);
            awaitUntil("onError", r::ended);
            DocumentDecodingException e = assertInstanceOf(DocumentDecodingException.class, r.error.get());
            assertEquals("app.people", e.getNamespace());
            assertTrue(e.getMessage().contains(Person.class.getName()), e.getMessage());

            assertEquals(new DeleteResult.Acknowledged(3), people.deleteMany(new BsonDocument()).join());
            people.drop().join();
            db.drop().join();
        }
    }

    @Test
    void documentsWithoutIdGetAGeneratedOneFirstAndTheCallersDocumentsAreNotChanged() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoDatabase db = cluster.getDatabase("ids");
            JavaMongoCollection<BsonDocument> docs = db.getCollection("docs");
            BsonDocument one = doc("{name: 'one', tags: ['a', 'b'], nested: {x: 1}}");
            BsonDocument before = one.clone();
            org.bson.BsonValue id = ((dev.mooring.driver.InsertOneResult.Acknowledged) docs.insertOne(one).join()).getInsertedId();
            assertTrue(id.isObjectId(), id.toString());
            assertEquals(before, one, "the caller's document is not changed");

            // a large document, and documents that carry their own _id, through insertMany
            String text = "x".repeat(200_000);
            List<BsonDocument> many = List.of(doc("{_id: 7, name: 'seven'}"), new BsonDocument("name", new BsonString("large")).append("text", new BsonString(text)));
            InsertManyResult result = docs.insertMany(many).join();
            java.util.Map<Integer, org.bson.BsonValue> ids = result.getInsertedIds();
            assertEquals(new BsonInt32(7), ids.get(0));
            assertTrue(ids.get(1).isObjectId(), ids.toString());
            assertNull(many.get(1).get("_id"), "the caller's document is not changed");

            List<BsonDocument> stored = all(docs.find(new BsonDocument()));
            assertEquals(3, stored.size());
            BsonDocument first = stored.stream().filter(d -> d.getString("name").getValue().equals("one")).findFirst().orElseThrow();
            assertEquals("_id", first.getFirstKey(), "the generated _id is the first field");
            assertEquals(id, first.get("_id"));
            BsonDocument withoutId = first.clone();
            withoutId.remove("_id");
            assertEquals(before, withoutId);
            BsonDocument large = stored.stream().filter(d -> d.getString("name").getValue().equals("large")).findFirst().orElseThrow();
            assertEquals(ids.get(1), large.get("_id"));
            assertEquals(text, large.getString("text").getValue());
            db.drop().join();
        }
    }

    @Test
    void bulkWriteOfEveryKindAndItsErrorsByIndex() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            List<WriteModel<City>> models = List.of(
                    WriteModels.insertOne(new City("Oslo", 700_000)),
                    WriteModels.insertOne(new City("Bergen", 285_000)),
                    WriteModels.insertOne(new City("Tromsø", 77_000)),
                    WriteModels.updateOne(doc("{_id: 'Oslo'}"), doc("{$inc: {population: 1}}")),
                    WriteModels.replaceOne(doc("{_id: 'Bergen'}"), new City("Bergen", 286_000)),
                    WriteModels.updateMany(doc("{population: {$gt: 0}}"), doc("{$inc: {population: 10}}")),
                    WriteModels.deleteOne(doc("{_id: 'Tromsø'}")));
            BulkWriteResult.Acknowledged result = assertInstanceOf(BulkWriteResult.Acknowledged.class, cities.bulkWrite(models).join());
            assertEquals(3, result.getInsertedCount());
            assertEquals(5, result.getMatchedCount()); // 1 + 1 + 3
            assertEquals(5, result.getModifiedCount());
            assertEquals(1, result.getDeletedCount());
            assertEquals(new BsonString("Tromsø"), result.getInsertedIds().get(2));
            assertEquals(List.of(new City("Bergen", 286_010), new City("Oslo", 700_011)),
                    all(cities.find(new BsonDocument(), new FindOptionsBuilder().sort(doc("{_id: 1}")).build())));

            // ordered: stops at the duplicate key (index 1), the model after it is not run
            CompletionException failed = assertThrows(CompletionException.class, () -> cities.bulkWrite(List.of(
                    WriteModels.insertOne(new City("Trondheim", 200_000)),
                    WriteModels.insertOne(new City("Oslo", 1)),
                    WriteModels.deleteMany(new BsonDocument()))).join());
            MongoBulkWriteException e = assertInstanceOf(MongoBulkWriteException.class, failed.getCause());
            assertEquals(1, e.getWriteErrors().size());
            assertEquals(1, e.getWriteErrors().get(0).getIndex());
            assertEquals(11000, e.getWriteErrors().get(0).getCode());
            assertEquals(java.util.Set.of(0), e.getPartialResult().getInsertedIds().keySet(), "the document before the error was inserted");
            assertEquals(3L, cities.countDocuments().join());
        }
    }

    @Test
    void aPublisherSendsGetMoresOnlyOnDemandAndCancelKillsTheCursor() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            for (int i = 0; i < 5; i++) cities.insertOne(new City("c" + i, i)).join();
            List<CommandStartedEvent> started = recordCommands(cluster);
            var options = new FindOptionsBuilder().batchSize(2).sort(doc("{population: 1}")).build();

            // request(1) at a time: batches of 2, so the getMores come with the 3rd and the 5th document
            Recorder<City> r = new Recorder<>();
            cities.find(new BsonDocument(), options).subscribe(r);
            long[] getMoresAt = new long[5];
            for (int i = 0; i < 5; i++) {
                r.subscription.request(1);
                int n = i + 1;
                awaitUntil("document " + n, () -> r.received.size() == n);
                getMoresAt[i] = count(started, "getMore");
                if (n < 5) assertTrue(!r.ended(), "no signal beyond the demand");
            }
            assertEquals("[0, 0, 1, 1, 2]", java.util.Arrays.toString(getMoresAt));
            assertEquals(1, count(started, "find"));
            r.subscription.request(1);
            awaitUntil("completion", r::ended);
            assertTrue(r.completed);
            assertNull(r.error.get());
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), r.received.stream().map(City::population).collect(Collectors.toList()));
            assertEquals(0, count(started, "killCursors"), "an exhausted cursor is not killed");

            // the first batch only, then cancel: no getMore, the open cursor is killed, the connection is back
            Recorder<City> partial = new Recorder<>();
            cities.find(new BsonDocument(), options).subscribe(partial);
            partial.subscription.request(2);
            awaitUntil("the first batch", () -> partial.received.size() == 2);
            partial.subscription.cancel();
            awaitUntil("killCursors", () -> count(started, "killCursors") == 1);
            awaitUntil("the connection is back", () -> cluster.poolStatistics().values().iterator().next().getInUseConnections() == 0);
            assertEquals(2, count(started, "getMore"), "only the first subscription's getMores");
            assertTrue(!partial.ended(), "nothing is signalled after cancel");
        }
    }

    @Test
    void aSubscriberWhoseDemandEndsWithTheLastDocumentIsCompletedWithoutAnotherRequest() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            cities.insertMany(List.of(new City("a", 1), new City("b", 2), new City("c", 3))).join();
            // one batch: request(3), exactly the documents there are
            Recorder<City> whole = new Recorder<>();
            cities.find().subscribe(whole);
            whole.subscription.request(3);
            awaitUntil("completion after the 3rd document", whole::ended);
            assertTrue(whole.completed);
            assertEquals(3, whole.received.size());
            // batches of 2: the getMore's batch is the last one; request(2) then request(1)
            Recorder<City> batched = new Recorder<>();
            cities.find(new BsonDocument(), new FindOptionsBuilder().batchSize(2).sort(doc("{population: 1}")).build()).subscribe(batched);
            batched.subscription.request(2);
            awaitUntil("the first batch", () -> batched.received.size() == 2);
            batched.subscription.request(1);
            awaitUntil("completion after the 3rd document", batched::ended);
            assertTrue(batched.completed);
            assertNull(batched.error.get());
            assertEquals(List.of(1L, 2L, 3L), batched.received.stream().map(City::population).collect(Collectors.toList()));
            // the typed collection is the driver's, over the registry's codec
            assertEquals(City.class, kotlin.jvm.JvmClassMappingKt.getJavaClass(cities.asMongoCollection().getDocumentClass()));
        }
    }

    @Test
    void cancellingAFutureCancelsTheOperation() {
        ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(uri).applyToPoolSettings(p -> p.maxPoolSize(1));
        try (JavaMongoCluster cluster = MongoClusters.create(builder)) {
            JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
            cities.countDocuments().join();
            // holds the only connection until cancelled
            CompletableFuture<Void> holder = cluster.withConnection(c -> new CompletableFuture<Void>());
            awaitUntil("the holder has the connection", () -> cluster.poolStatistics().values().iterator().next().getInUseConnections() == 1);

            CompletableFuture<?> insert = cities.insertOne(new City("Oslo", 700_000));
            awaitUntil("the insert waits for a connection", () -> cluster.poolStatistics().values().iterator().next().getWaitQueueSize() == 1);
            assertTrue(insert.cancel(true));
            awaitUntil("the cancelled insert has left the wait queue", () -> cluster.poolStatistics().values().iterator().next().getWaitQueueSize() == 0);
            assertTrue(insert.isCancelled());
            assertThrows(CancellationException.class, insert::join);

            assertTrue(holder.cancel(true));
            awaitUntil("the held connection is back", () -> cluster.poolStatistics().values().iterator().next().getInUseConnections() == 0);
            assertEquals(0L, cities.countDocuments().join(), "the cancelled insert was never sent");
        }
    }

    @Test
    void afterCloseOperationsFailWithTheClustersClosedError() {
        JavaMongoCluster cluster = MongoClusters.create(uri);
        JavaMongoCollection<City> cities = cluster.getDatabase("geo").getCollection("cities", City.class);
        cities.insertOne(new City("Oslo", 700_000)).join();
        cluster.close();

        CompletionException insert = assertThrows(CompletionException.class, () -> cities.insertOne(new City("Bergen", 1)).join());
        assertInstanceOf(MongoClusterClosedException.class, insert.getCause());
        CompletionException count = assertThrows(CompletionException.class, () -> cities.countDocuments().join());
        assertInstanceOf(MongoClusterClosedException.class, count.getCause());
        CompletionException command = assertThrows(CompletionException.class,
                () -> cluster.getDatabase("geo").runCommand(new BsonDocument("ping", new BsonInt32(1))).join());
        assertInstanceOf(MongoClusterClosedException.class, command.getCause());
        Recorder<City> r = new Recorder<>();
        cities.find().subscribe(r);
        r.subscription.request(1);
        awaitUntil("onError", r::ended);
        assertInstanceOf(MongoClusterClosedException.class, r.error.get());
    }
}
