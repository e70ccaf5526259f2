package dev.mooring.java;

import dev.mooring.cmap.CommandStartedEvent;
import dev.mooring.sdam.ClientSession;
import dev.mooring.sdam.MongoSessionNotSupportedException;
import dev.mooring.sdam.ReadPreference;
import dev.mooring.sdam.RunCursorCommandOptions;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** runCursorCommand as a Flow.Publisher: getMore only on demand, cancel sends killCursors; startSession from Java. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaCursorPublisherTest extends MongoJavaServerFixture {

    /** Records what it is given and requests only when told to. */
    private static class Recorder implements Flow.Subscriber<BsonDocument> {
        final List<BsonDocument> received = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<Throwable> error = new AtomicReference<>();
        volatile boolean completed;
        volatile Flow.Subscription subscription;

        @Override public void onSubscribe(Flow.Subscription s) { subscription = s; }
        @Override public void onNext(BsonDocument d) { received.add(d); }
        @Override public void onError(Throwable t) { error.set(t); }
        @Override public void onComplete() { completed = true; }
    }

    private static long count(List<CommandStartedEvent> started, String name) {
        synchronized (started) {
            return started.stream().filter(e -> e.getCommandName().equals(name)).count();
        }
    }

    @Test
    void getMoreOnlyOnDemandAndCancelKillsTheCursor() throws Exception {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            List<BsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < 25; i++) docs.add(new BsonDocument("_id", new BsonInt32(i)));
            cluster.runCommand("db", new BsonDocument("insert", new BsonString("c")).append("documents", new BsonArray(docs))).join();
            List<CommandStartedEvent> started = Collections.synchronizedList(new ArrayList<>());
            cluster.addEventListener(e -> { if (e instanceof CommandStartedEvent s) started.add(s); });
            BsonDocument find = new BsonDocument("find", new BsonString("c")).append("batchSize", new BsonInt32(5));
            RunCursorCommandOptions options = new RunCursorCommandOptions(ReadPreference.PRIMARY, null, null, null,
                dev.mooring.sdam.CursorType.NON_TAILABLE, 5, null, null);

            Recorder r = new Recorder();
            cluster.runCursorCommand("db", find, options).subscribe(r);
            Thread.sleep(200);
            assertEquals(0, count(started, "find"), "nothing is sent before the first request");
            r.subscription.request(5);
            Await.until("the first batch", () -> r.received.size() == 5);
            Thread.sleep(200);
            assertEquals(0, count(started, "getMore"), "no getMore without demand");
            r.subscription.request(1);
            Await.until("a document of the second batch", () -> r.received.size() == 6);
            assertEquals(1, count(started, "getMore"));
            r.subscription.cancel();
            Await.until("killCursors", () -> count(started, "killCursors") == 1);
            Await.until("the connection is back", () -> cluster.poolStatistics().values().iterator().next().getInUseConnections() == 0);
            assertNull(r.error.get());

            Recorder all = new Recorder();
            cluster.runCursorCommand("db", find, options).subscribe(all);
            all.subscription.request(Long.MAX_VALUE);
            Await.until("completion", () -> all.completed);
            assertEquals(25, all.received.size());
            assertEquals(1, count(started, "killCursors"), "an exhausted cursor is not killed");

            Recorder bad = new Recorder();
            cluster.runCursorCommand("db", find, options).subscribe(bad);
            bad.subscription.request(0);
            Await.until("onError for request(0)", () -> bad.error.get() != null);
            assertTrue(bad.error.get() instanceof IllegalArgumentException);
        }
    }

    @Test
    void startSessionFromJava() {
        // mongo-java-server reports no logicalSessionTimeoutMinutes: an explicit session is refused with a typed error
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            try (ClientSession session = cluster.startSession()) {
                BsonDocument ping = new BsonDocument("ping", new BsonInt32(1));
                CompletionException e = assertThrows(CompletionException.class, () -> cluster.runCommand("admin", ping, ReadPreference.PRIMARY, session).join());
                assertInstanceOf(MongoSessionNotSupportedException.class, e.getCause());
                assertEquals(1, cluster.runCommand("admin", ping).join().getNumber("ok").intValue()); // and no implicit lsid is sent there
            }
        }
    }

    /**
     * Requests n from within onSubscribe and then gives a signal a chance to arrive before
     * returning; records any signal that arrives while onSubscribe still runs.
     */
    private static final class OnSubscribeProbe implements Flow.Subscriber<BsonDocument> {
        final long n;
        final CountDownLatch signalled = new CountDownLatch(1);
        volatile boolean insideOnSubscribe;
        volatile String overlapping;
        volatile Flow.Subscription subscription;

        OnSubscribeProbe(long n) { this.n = n; }

        @Override public void onSubscribe(Flow.Subscription s) {
            insideOnSubscribe = true;
            subscription = s;
            s.request(n);
            try {
                signalled.await(500, TimeUnit.MILLISECONDS); // a signal sent now would overlap this call
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            insideOnSubscribe = false;
        }

        private void signal(String name) {
            if (insideOnSubscribe && overlapping == null) overlapping = name;
            signalled.countDown();
        }

        @Override public void onNext(BsonDocument d) { signal("onNext"); }
        @Override public void onError(Throwable t) { signal("onError"); }
        @Override public void onComplete() { signal("onComplete"); }
    }

    @Test
    void noSignalWhileOnSubscribeRuns() {
        // Reactive Streams rule 1.3: signals are serial, onSubscribe included, even when it requests (or requests 0) itself
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            cluster.runCommand("db", new BsonDocument("insert", new BsonString("c"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1)))))).join();
            BsonDocument find = new BsonDocument("find", new BsonString("c"));
            for (long n : new long[] {1, 0}) {
                OnSubscribeProbe probe = new OnSubscribeProbe(n);
                cluster.runCursorCommand("db", find).subscribe(probe);
                Await.until("a signal after request(" + n + ")", () -> probe.signalled.getCount() == 0);
                assertNull(probe.overlapping, "request(" + n + "): " + probe.overlapping + " arrived while onSubscribe was still running");
                probe.subscription.cancel();
            }
        }
    }

    @Test
    void cancelFromOnNextStopsTheDocuments() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            List<BsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < 10; i++) docs.add(new BsonDocument("_id", new BsonInt32(i)));
            cluster.runCommand("db", new BsonDocument("insert", new BsonString("c")).append("documents", new BsonArray(docs))).join();
            List<CommandStartedEvent> started = Collections.synchronizedList(new ArrayList<>());
            cluster.addEventListener(e -> { if (e instanceof CommandStartedEvent st) started.add(st); });
            Recorder r = new Recorder() {
                @Override public void onNext(BsonDocument d) {
                    super.onNext(d);
                    if (received.size() == 3) subscription.cancel();
                }
            };
            BsonDocument find = new BsonDocument("find", new BsonString("c")).append("batchSize", new BsonInt32(5));
            cluster.runCursorCommand("db", find).subscribe(r);
            r.subscription.request(Long.MAX_VALUE);
            Await.until("killCursors after the cancel", () -> count(started, "killCursors") == 1);
            assertEquals(3, r.received.size(), "no onNext after cancel");
            assertEquals(0, count(started, "getMore"));
            assertNull(r.error.get());
            assertTrue(!r.completed, "no onComplete after cancel");
        }
    }

    @Test
    void closingTheClusterEndsAWaitingSubscriberWithAnErrorAndACancelledOneSilently() {
        Recorder waiting = new Recorder();
        Recorder cancelled = new Recorder();
        JavaMongoCluster cluster = MongoClusters.create(uri);
        try {
            List<BsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < 10; i++) docs.add(new BsonDocument("_id", new BsonInt32(i)));
            cluster.runCommand("db", new BsonDocument("insert", new BsonString("c")).append("documents", new BsonArray(docs))).join();
            BsonDocument find = new BsonDocument("find", new BsonString("c")).append("batchSize", new BsonInt32(5));
            cluster.runCursorCommand("db", find).subscribe(waiting);
            waiting.subscription.request(5);
            Await.until("the first batch", () -> waiting.received.size() == 5); // the cursor is open, waiting for demand
            cluster.runCursorCommand("db", find).subscribe(cancelled);
            cancelled.subscription.cancel();
            cancelled.subscription.request(0); // after cancel: a no-op (rule 3.6), no onError
        } finally {
            cluster.close(); // waits for every subscription's work to end
        }
        assertInstanceOf(dev.mooring.sdam.MongoClusterClosedException.class, waiting.error.get(), "a publisher that stops must signal it (rule 1.4)");
        assertTrue(!waiting.completed);
        assertNull(cancelled.error.get());
        assertTrue(!cancelled.completed);
        assertEquals(0, cancelled.received.size());
    }
}
