package dev.mooring.java;

import dev.mooring.driver.ChangeStreamDocument;
import dev.mooring.driver.ChangeStreamNamespace;
import dev.mooring.testkit.replset.ReplicaSetSimulator;
import dev.mooring.testkit.replset.SimulatedMember;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The Java facade's database and cluster change streams (JavaMongoDatabase.watch,
 * JavaMongoCluster.watch) against the test kit's replica set: the events of their scope, in order,
 * delivered on demand, and cancel() kills the server cursor.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaWatchTest {

    /** Requests one event at a time and records them; [cancel] cancels the subscription. */
    private static final class Recorder implements Flow.Subscriber<ChangeStreamDocument<BsonDocument>> {
        final List<ChangeStreamDocument<BsonDocument>> events = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        private final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription.set(s);
            s.request(1);
        }

        @Override
        public void onNext(ChangeStreamDocument<BsonDocument> item) {
            events.add(item);
            subscription.get().request(1);
        }

        @Override
        public void onError(Throwable throwable) {
            error.set(throwable);
        }

        @Override
        public void onComplete() {
        }

        void cancel() {
            subscription.get().cancel();
        }

        List<String> namespaces() {
            return events.stream().map(e -> {
                ChangeStreamNamespace ns = e.getNs();
                return e.getOperationType() + " " + ns.getDb() + "." + ns.getColl();
            }).collect(Collectors.toList());
        }
    }

    private static int openCursors(ReplicaSetSimulator rs) {
        return rs.getMembers().stream().mapToInt(SimulatedMember::getOpenCursors).sum();
    }

    private static BsonDocument doc(int id) {
        return new BsonDocument("_id", new BsonInt32(id));
    }

    private static void insert(JavaMongoCluster cluster, String db, String coll, int id) {
        cluster.getDatabase(db).getCollection(coll).insertOne(doc(id)).join();
    }

    @Test
    void aDatabaseStreamSeesEveryCollectionOfItsDatabaseOnlyAndCancelKillsItsCursor() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSetWithClusterTime(2);
             JavaMongoCluster cluster = MongoClusters.create(rs.seedUri("serverSelectionTimeoutMS=5000", rs.getMembers().get(0)))) {
            JavaChangeStream<BsonDocument> stream = cluster.getDatabase("shop")
                    .watch(List.of(), new ChangeStreamOptionsBuilder().maxAwaitTimeMS(50).build(), null);
            assertNull(stream.getResumeToken()); // cold: nothing sent before a subscriber
            Recorder recorder = new Recorder();
            stream.subscribe(recorder);
            // the stream is open once the server sent its first postBatchResumeToken
            Await.until("the stream is open", () -> stream.getResumeToken() != null);
            int open = openCursors(rs);
            insert(cluster, "shop", "items", 1);
            insert(cluster, "other", "items", 2);
            insert(cluster, "shop", "orders", 3);
            insert(cluster, "shop", "items", 4);
            Await.until("three events", () -> recorder.events.size() >= 3);
            assertEquals(List.of("insert shop.items", "insert shop.orders", "insert shop.items"), recorder.namespaces());
            assertEquals(List.of(1, 3, 4), recorder.events.stream().map(e -> e.getFullDocument().getInt32("_id").getValue()).collect(Collectors.toList()));
            assertNull(recorder.error.get());

            recorder.cancel();
            Await.until("the cursor is killed", () -> openCursors(rs) < open);
            assertEquals(recorder.events.get(2).getResumeToken(), stream.getResumeToken());
        }
    }

    @Test
    void aClusterStreamSeesEveryDatabaseAndResumesAfterAStoredToken() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSetWithClusterTime(2);
             JavaMongoCluster cluster = MongoClusters.create(rs.seedUri("serverSelectionTimeoutMS=5000", rs.getMembers().get(0)))) {
            JavaChangeStream<BsonDocument> stream = cluster.watch(List.of(), new ChangeStreamOptionsBuilder().maxAwaitTimeMS(50).build(), null);
            Recorder recorder = new Recorder();
            stream.subscribe(recorder);
            Await.until("the stream is open", () -> stream.getResumeToken() != null);
            insert(cluster, "a", "x", 1);
            insert(cluster, "b", "y", 2);
            Await.until("two events", () -> recorder.events.size() >= 2);
            assertEquals(List.of("insert a.x", "insert b.y"), recorder.namespaces());
            recorder.cancel();

            // a new stream from the first event's token sees only what came after it
            BsonDocument checkpoint = recorder.events.get(0).getResumeToken();
            JavaChangeStream<BsonDocument> resumed = cluster.watch(List.of(),
                    new ChangeStreamOptionsBuilder().resumeAfter(checkpoint).maxAwaitTimeMS(50).build(), null);
            Recorder after = new Recorder();
            resumed.subscribe(after);
            Await.until("the resumed stream's event", () -> after.events.size() >= 1);
            assertEquals(List.of("insert b.y"), after.namespaces());
            after.cancel();
        }
    }
}
