package dev.mooring.samples;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.mooring.cmap.ConnectionCheckedOutEvent;
import dev.mooring.cmap.ConnectionPoolStatistics;
import dev.mooring.events.MooringEvent;
import dev.mooring.driver.ChangeStreamDocument;
import dev.mooring.java.ClusterListener;
import dev.mooring.java.JavaChangeStream;
import dev.mooring.java.ClusterSettingsBuilder;
import dev.mooring.java.ConnectionPoolListener;
import dev.mooring.java.JavaMongoCluster;
import dev.mooring.java.MongoClusters;
import dev.mooring.java.MooringEventTimes;
import dev.mooring.sdam.ReadPreference;
import dev.mooring.sdam.TopologyDescriptionChangedEvent;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Mooring from Java, through the facade alone ({@code dev.mooring.java}): settings builder,
 * listeners, futures, a connection lent for several commands, the event publisher, pool
 * statistics and try-with-resources.
 *
 * <p>Run it with a connection string ({@code mongodb://host:port}) or with no argument to use an
 * in-process mongo-java-server.
 */
public final class JavaSample {
    private JavaSample() {
    }

    /** What one run observed. */
    public record Result(
            int pingOk,
            String topologyType,
            List<String> names,
            int topologyChanges,
            int checkouts,
            long publishedEvents,
            ConnectionPoolStatistics finalStatistics) {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length > 0) {
            System.out.println(run(args[0]));
            return;
        }
        MongoServer server = new MongoServer(new MemoryBackend());
        try {
            server.bind("127.0.0.1", 0);
            String uri = "mongodb://127.0.0.1:" + server.getLocalAddress().getPort();
            System.out.println("embedded mongo-java-server at " + uri);
            System.out.println(run(uri));
        } finally {
            server.shutdownNow();
        }
    }

    /**
     * The Java quick start's transaction and change stream (they need a replica set or a sharded
     * cluster: mongo-java-server has neither; the test runs this on the test kit's replica set):
     * a change stream on {@code bank.accounts} receives the two inserts that
     * {@code withTransaction} commits together. Returns the inserted {@code _id}s as the stream
     * reported them.
     */
    public static List<BsonValue> runTransactionAndWatch(String uri) throws InterruptedException {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            // a change stream: a Flow.Publisher of events that resumes after an election; cancel() kills the cursor
            JavaChangeStream<BsonDocument> changes = cluster.getDatabase("bank").getCollection("accounts").watch();
            List<BsonValue> ids = new CopyOnWriteArrayList<>();
            CountDownLatch two = new CountDownLatch(2);
            changes.subscribe(new Flow.Subscriber<ChangeStreamDocument<BsonDocument>>() {
                private Flow.Subscription subscription;
                @Override public void onSubscribe(Flow.Subscription s) { subscription = s; s.request(1); }
                @Override public void onNext(ChangeStreamDocument<BsonDocument> change) {
                    System.out.println("change: " + change.getOperationType() + " " + change.getDocumentKey());
                    ids.add(change.getDocumentKey().get("_id"));
                    two.countDown();
                    if (ids.size() < 2) subscription.request(1); else subscription.cancel();
                }
                @Override public void onError(Throwable throwable) { }
                @Override public void onComplete() { }
            });
            while (changes.getResumeToken() == null) Thread.sleep(10); // the stream is open (only so that this sample sees both inserts)

            // a transaction: the function may run again on TransientTransactionError; its stage failing aborts it
            cluster.withTransaction(session -> cluster.runRetryableWrite("bank",
                            BsonDocument.parse("{insert: 'accounts', documents: [{_id: 'alice', balance: 100}]}"), session)
                    .thenCompose(r -> cluster.runRetryableWrite("bank",
                            BsonDocument.parse("{insert: 'accounts', documents: [{_id: 'bob', balance: 0}]}"), session))).join();
            two.await(30, TimeUnit.SECONDS);
            return ids;
        }
    }

    /** Runs the sample against {@code uri} and reports what it saw. */
    public static Result run(String uri) throws InterruptedException {
        AtomicInteger topologyChanges = new AtomicInteger();
        AtomicInteger checkouts = new AtomicInteger();

        // Settings: the same MongoClusterSettings a URI or the Kotlin DSL would produce; listeners
        // registered here see the opening events too.
        ClusterSettingsBuilder settings = MongoClusters.settingsBuilder(uri)
                .serverSelectionTimeoutMS(10_000)
                .applyToPoolSettings(pool -> pool.maxPoolSize(10).maxConnecting(2))
                .applyToConnectionSettings(connection -> connection.appName("mooring-java-sample"))
                .addClusterListener(new ClusterListener() {
                    @Override
                    public void clusterDescriptionChanged(TopologyDescriptionChangedEvent event) {
                        topologyChanges.incrementAndGet();
                        System.out.println("topology: " + event.getNewDescription().getType());
                    }
                })
                .addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionCheckedOut(ConnectionCheckedOutEvent event) {
                        checkouts.incrementAndGet();
                        System.out.println("checked out connection " + event.getConnectionId()
                                + " in " + MooringEventTimes.duration(event).toMillis() + " ms");
                    }
                });

        try (JavaMongoCluster cluster = MongoClusters.create(settings)) {
            // Reactive users: a Flow.Publisher of every event.
            AtomicLong published = new AtomicLong();
            CountDownLatch completed = new CountDownLatch(1);
            cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
                @Override public void onSubscribe(Flow.Subscription subscription) { subscription.request(Long.MAX_VALUE); }
                @Override public void onNext(MooringEvent item) { published.incrementAndGet(); }
                @Override public void onError(Throwable throwable) { completed.countDown(); }
                @Override public void onComplete() { completed.countDown(); }
            });

            int pingOk = cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1))).join()
                    .getNumber("ok").intValue();

            BsonDocument insert = new BsonDocument("insert", new BsonString("people")).append("documents", new BsonArray(List.of(
                    new BsonDocument("_id", new BsonInt32(1)).append("name", new BsonString("Ada")),
                    new BsonDocument("_id", new BsonInt32(2)).append("name", new BsonString("Grace")))));
            BsonDocument find = new BsonDocument("find", new BsonString("people")).append("sort", new BsonDocument("_id", new BsonInt32(1)));

            // One connection for two dependent commands; it goes back to the pool when the stage completes.
            BsonDocument found = cluster.withConnection(ReadPreference.PRIMARY,
                    connection -> connection.command("sample", insert).thenCompose(ignored -> connection.command("sample", find))).join();
            List<String> names = new ArrayList<>();
            for (BsonValue doc : found.getDocument("cursor").getArray("firstBatch")) {
                names.add(doc.asDocument().getString("name").getValue());
            }
            String type = cluster.topology().getType().name();
            ConnectionPoolStatistics stats = cluster.poolStatistics().values().iterator().next();
            cluster.close();
            completed.await(10, TimeUnit.SECONDS);
            return new Result(pingOk, type, names, topologyChanges.get(), checkouts.get(), published.get(), stats);
        }
    }
}
