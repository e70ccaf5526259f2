package dev.mooring.java;

import dev.mooring.cmap.CommandFailedEvent;
import dev.mooring.cmap.CommandStartedEvent;
import dev.mooring.cmap.CommandSucceededEvent;
import dev.mooring.cmap.ConnectionCheckOutStartedEvent;
import dev.mooring.cmap.ConnectionCheckedInEvent;
import dev.mooring.cmap.ConnectionCheckedOutEvent;
import dev.mooring.cmap.ConnectionCreatedEvent;
import dev.mooring.cmap.ConnectionPoolEvent;
import dev.mooring.cmap.ConnectionPoolStatistics;
import dev.mooring.cmap.ConnectionReadyEvent;
import dev.mooring.cmap.PoolClosedEvent;
import dev.mooring.cmap.PoolCreatedEvent;
import dev.mooring.cmap.PoolReadyEvent;
import dev.mooring.events.MooringEvent;
import dev.mooring.sdam.MongoClusterClosedException;
import dev.mooring.sdam.ServerType;
import dev.mooring.sdam.TopologyClosedEvent;
import dev.mooring.sdam.TopologyDescriptionChangedEvent;
import dev.mooring.sdam.TopologyOpeningEvent;
import dev.mooring.sdam.TopologyType;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java facade against mongo-java-server, using only the facade's API. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaFacadeMongoJavaServerTest extends MongoJavaServerFixture {

    private static BsonDocument ping() {
        return new BsonDocument("ping", new BsonInt32(1));
    }

    private static ConnectionPoolStatistics stats(JavaMongoCluster cluster) {
        return cluster.poolStatistics().values().iterator().next();
    }

    @Test
    void runsCommandsThroughFutures() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            BsonDocument pong = cluster.runCommand("admin", ping()).join();
            assertEquals(1, pong.getNumber("ok").intValue());
            assertEquals(TopologyType.SINGLE, cluster.topology().getType());
            assertEquals(ServerType.STANDALONE, cluster.topology().getServers().values().iterator().next().getType());

            BsonDocument insert = new BsonDocument("insert", new BsonString("people"))
                    .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1)).append("name", new BsonString("Ada")))));
            assertEquals(1, cluster.runCommand("test", insert).join().getNumber("n").intValue());
            BsonDocument found = cluster.runCommand("test", new BsonDocument("find", new BsonString("people"))).join();
            assertEquals("Ada", found.getDocument("cursor").getArray("firstBatch").get(0).asDocument().getString("name").getValue());

            ConnectionPoolStatistics s = stats(cluster);
            assertEquals(0, s.getInUseConnections());
            assertEquals(0, s.getWaitQueueSize());
            assertTrue(s.getAvailableConnections() >= 1);
        }
    }

    @Test
    void commandErrorsFailTheFutureWithTheTypedException() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            CompletionException e = assertThrows(CompletionException.class,
                    () -> cluster.runCommand("admin", new BsonDocument("noSuchCommandAtAll", new BsonInt32(1))).join());
            assertInstanceOf(dev.mooring.cmap.MongoCommandException.class, e.getCause());
            CompletionException empty = assertThrows(CompletionException.class, () -> cluster.runCommand("", ping()).join());
            assertInstanceOf(IllegalArgumentException.class, empty.getCause());
        }
    }

    @Test
    void listenersRegisteredOnTheBuilderSeeEveryEventInPublicationOrder() {
        List<MooringEvent> all = Collections.synchronizedList(new ArrayList<>());
        List<MooringEvent> pool = Collections.synchronizedList(new ArrayList<>());
        List<MooringEvent> clusterEvents = Collections.synchronizedList(new ArrayList<>());
        ConnectionPoolListener poolListener = new ConnectionPoolListener() {
            @Override public void connectionPoolCreated(PoolCreatedEvent event) { pool.add(event); }
            @Override public void connectionPoolReady(PoolReadyEvent event) { pool.add(event); }
            @Override public void connectionPoolClosed(PoolClosedEvent event) { pool.add(event); }
            @Override public void connectionCreated(ConnectionCreatedEvent event) { pool.add(event); }
            @Override public void connectionReady(ConnectionReadyEvent event) {
                assertFalse(MooringEventTimes.duration(event).isNegative());
                pool.add(event);
            }
            @Override public void connectionCheckOutStarted(ConnectionCheckOutStartedEvent event) { pool.add(event); }
            @Override public void connectionCheckedOut(ConnectionCheckedOutEvent event) { pool.add(event); }
            @Override public void connectionCheckedIn(ConnectionCheckedInEvent event) { pool.add(event); }
        };
        ClusterListener clusterListener = new ClusterListener() {
            @Override public void clusterOpening(TopologyOpeningEvent event) { clusterEvents.add(event); }
            @Override public void clusterDescriptionChanged(TopologyDescriptionChangedEvent event) { clusterEvents.add(event); }
            @Override public void clusterClosed(TopologyClosedEvent event) { clusterEvents.add(event); }
        };
        ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(uri)
                .addEventListener(all::add)
                .addConnectionPoolListener(poolListener)
                .addClusterListener(clusterListener);
        JavaMongoCluster cluster = MongoClusters.create(builder);
        cluster.runCommand("admin", ping()).join();
        cluster.runCommand("admin", ping()).join();
        cluster.close();

        // The cluster's events: opening first, closed last, a description change to Single between.
        assertInstanceOf(TopologyOpeningEvent.class, clusterEvents.get(0));
        assertInstanceOf(TopologyClosedEvent.class, clusterEvents.get(clusterEvents.size() - 1));
        assertTrue(clusterEvents.stream().anyMatch(e -> e instanceof TopologyDescriptionChangedEvent
                && ((TopologyDescriptionChangedEvent) e).getNewDescription().getType() == TopologyType.SINGLE));

        // Each typed listener saw its events in exactly the order of the full stream.
        assertEquals(all.stream().filter(clusterEvents::contains).collect(Collectors.toList()), clusterEvents);
        assertEquals(all.stream().filter(pool::contains).collect(Collectors.toList()), pool);

        // The pool's lifecycle and the CMAP order of each checkout.
        List<Class<?>> kinds = pool.stream().map(Object::getClass).collect(Collectors.toList());
        assertEquals(PoolCreatedEvent.class, kinds.get(0));
        assertEquals(PoolClosedEvent.class, kinds.get(kinds.size() - 1));
        assertTrue(kinds.indexOf(PoolReadyEvent.class) < kinds.indexOf(ConnectionCheckOutStartedEvent.class));
        List<Class<?>> checkouts = kinds.stream()
                .filter(k -> k == ConnectionCheckOutStartedEvent.class || k == ConnectionCheckedOutEvent.class || k == ConnectionCheckedInEvent.class)
                .collect(Collectors.toList());
        assertEquals(List.of(ConnectionCheckOutStartedEvent.class, ConnectionCheckedOutEvent.class, ConnectionCheckedInEvent.class,
                ConnectionCheckOutStartedEvent.class, ConnectionCheckedOutEvent.class, ConnectionCheckedInEvent.class), checkouts);
        int created = kinds.indexOf(ConnectionCreatedEvent.class);
        assertTrue(created > kinds.indexOf(ConnectionCheckOutStartedEvent.class));
        assertTrue(kinds.indexOf(ConnectionReadyEvent.class) > created);
        assertTrue(kinds.indexOf(ConnectionCheckedOutEvent.class) > kinds.indexOf(ConnectionReadyEvent.class));
    }

    @Test
    void aThrowingListenerIsLoggedAndBreaksNothing() {
        List<MooringEvent> seen = Collections.synchronizedList(new ArrayList<>());
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            ConnectionPoolListener throwing = new ConnectionPoolListener() {
                @Override public void connectionCheckOutStarted(ConnectionCheckOutStartedEvent event) { throw new IllegalStateException("listener bug"); }
                @Override public void connectionCheckedIn(ConnectionCheckedInEvent event) { throw new Error("worse listener bug"); }
            };
            try (ListenerRegistration bad = cluster.addConnectionPoolListener(throwing);
                 ListenerRegistration good = cluster.addEventListener(seen::add)) {
                for (int i = 0; i < 3; i++) {
                    assertEquals(1, cluster.runCommand("admin", ping()).join().getNumber("ok").intValue());
                }
            }
            assertEquals(3, seen.stream().filter(e -> e instanceof ConnectionCheckedInEvent).count());
            assertEquals(3, seen.stream().filter(e -> e instanceof ConnectionCheckOutStartedEvent).count());
            assertEquals(0, stats(cluster).getInUseConnections());
        }
    }

    @Test
    void aClosedRegistrationReceivesNothingMore() {
        List<MooringEvent> seen = Collections.synchronizedList(new ArrayList<>());
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            ListenerRegistration registration = cluster.addConnectionPoolListener(new ConnectionPoolListener() {
                @Override public void connectionCheckedIn(ConnectionCheckedInEvent event) { seen.add(event); }
            });
            cluster.runCommand("admin", ping()).join();
            registration.close();
            registration.close(); // idempotent
            cluster.runCommand("admin", ping()).join();
            assertEquals(1, seen.size());

            ClusterListener removable = new ClusterListener() { };
            cluster.addClusterListener(removable);
            assertTrue(cluster.removeListener(removable));
            assertFalse(cluster.removeListener(removable));
        }
    }

    @Test
    void cancellingFuturesCancelsTheOperationsAndThePoolReturnsToIdle() {
        ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(uri).applyToPoolSettings(p -> p.maxPoolSize(1));
        try (JavaMongoCluster cluster = MongoClusters.create(builder)) {
            cluster.runCommand("admin", ping()).join();
            CompletableFuture<Void> never = new CompletableFuture<>();
            AtomicReference<JavaConnection> lent = new AtomicReference<>();
            // Holds the only connection until cancelled.
            CompletableFuture<Void> holder = cluster.withConnection(c -> {
                lent.set(c);
                return never;
            });
            Await.until("the holder has the connection", () -> stats(cluster), s -> s.getInUseConnections() == 1);
            List<CompletableFuture<BsonDocument>> waiting = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                waiting.add(cluster.runCommand("admin", ping()));
            }
            Await.until("three checkouts wait in the queue", () -> stats(cluster), s -> s.getWaitQueueSize() == 3);

            for (CompletableFuture<BsonDocument> f : waiting) {
                assertTrue(f.cancel(true));
            }
            Await.until("the cancelled checkouts have left the wait queue", () -> stats(cluster), s -> s.getWaitQueueSize() == 0);
            for (CompletableFuture<BsonDocument> f : waiting) {
                assertTrue(f.isCancelled());
                assertThrows(CancellationException.class, f::join);
            }
            assertEquals(1, stats(cluster).getInUseConnections());

            assertTrue(holder.cancel(true));
            Await.until("the held connection is back", () -> stats(cluster),
                    s -> s.getInUseConnections() == 0 && s.getWaitQueueSize() == 0 && s.getPendingConnections() == 0);
            assertTrue(never.isCancelled(), "the user's stage is cancelled with the operation");
            CompletionException afterLending = assertThrows(CompletionException.class, () -> lent.get().command("admin", ping()).join());
            assertInstanceOf(IllegalStateException.class, afterLending.getCause());

            // The pool still works and is idle afterwards.
            assertEquals(1, cluster.runCommand("admin", ping()).join().getNumber("ok").intValue());
            ConnectionPoolStatistics idle = stats(cluster);
            assertEquals(0, idle.getInUseConnections());
            assertEquals(0, idle.getWaitQueueSize());
            assertTrue(idle.getTotalConnections() <= 1);
        }
    }

    @Test
    void withConnectionChainsCommandsOnOneConnectionAndReturnsIt() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            AtomicReference<JavaConnection> lent = new AtomicReference<>();
            BsonDocument result = cluster.withConnection(c -> {
                lent.set(c);
                BsonDocument insert = new BsonDocument("insert", new BsonString("c"))
                        .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(7)))));
                return c.command("test", insert)
                        .thenCompose(ignored -> c.command("test", new BsonDocument("find", new BsonString("c"))));
            }).join();
            assertEquals(7, result.getDocument("cursor").getArray("firstBatch").get(0).asDocument().getInt32("_id").getValue());
            assertEquals(0, stats(cluster).getInUseConnections());
            CompletionException e = assertThrows(CompletionException.class, () -> lent.get().command("admin", ping()).join());
            assertInstanceOf(IllegalStateException.class, e.getCause());

            // A failing command fails only its own future: the stage may recover and the connection stays usable.
            String recovered = cluster.withConnection(c -> c.command("admin", new BsonDocument("noSuchCommandAtAll", new BsonInt32(1)))
                    .handle((reply, error) -> error instanceof dev.mooring.cmap.MongoCommandException ? "recovered" : "unexpected: " + reply + " " + error)
                    .thenCompose(r -> c.command("admin", ping()).thenApply(pong -> r + " " + pong.getNumber("ok").intValue()))).join();
            assertEquals("recovered 1", recovered);
            assertEquals(0, stats(cluster).getInUseConnections());

            // A function that throws fails the future and returns the connection.
            CompletionException thrown = assertThrows(CompletionException.class,
                    () -> cluster.withConnection(c -> { throw new IllegalArgumentException("boom"); }).join());
            assertInstanceOf(IllegalArgumentException.class, thrown.getCause());
            assertEquals(0, stats(cluster).getInUseConnections());
        }
    }

    @Test
    void afterCloseOperationsFailAndSnapshotsStayReadable() {
        JavaMongoCluster cluster = MongoClusters.create(uri);
        cluster.runCommand("admin", ping()).join();
        cluster.close();
        cluster.close(); // idempotent
        assertTrue(cluster.isClosed());
        assertTrue(cluster.closeAsync().isDone());
        CompletionException e = assertThrows(CompletionException.class, () -> cluster.runCommand("admin", ping()).join());
        assertInstanceOf(MongoClusterClosedException.class, e.getCause());
        CompletionException w = assertThrows(CompletionException.class,
                () -> cluster.withConnection(c -> c.command("admin", ping())).join());
        assertInstanceOf(MongoClusterClosedException.class, w.getCause());
        assertEquals(TopologyType.UNKNOWN, cluster.topology().getType());
        cluster.poolStatistics(); // readable
    }

    @Test
    void thePublisherDeliversEveryEventInOrderThenCompletesOnClose() throws InterruptedException {
        JavaMongoCluster cluster = MongoClusters.create(uri);
        List<MooringEvent> listened = Collections.synchronizedList(new ArrayList<>());
        List<MooringEvent> published = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch completed = new CountDownLatch(1);
        AtomicReference<Throwable> error = new AtomicReference<>();
        cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
            private Flow.Subscription subscription;

            @Override public void onSubscribe(Flow.Subscription s) {
                subscription = s;
                s.request(1);
            }

            @Override public void onNext(MooringEvent item) {
                published.add(item);
                subscription.request(1); // one at a time: exercises demand
            }

            @Override public void onError(Throwable t) {
                error.set(t);
                completed.countDown();
            }

            @Override public void onComplete() {
                completed.countDown();
            }
        });
        cluster.addEventListener(listened::add);
        // Concurrent operations publish from several threads at once: the order must still be one order for everyone.
        List<CompletableFuture<BsonDocument>> concurrent = new ArrayList<>();
        for (int i = 0; i < 16; i++) concurrent.add(cluster.runCommand("admin", ping()));
        concurrent.forEach(CompletableFuture::join);
        cluster.close();
        assertTrue(completed.await(30, TimeUnit.SECONDS));
        assertEquals(null, error.get());
        // The subscriber got (at least) everything the later listener got, in the same order, ending with TopologyClosed.
        List<MooringEvent> tail = published.subList(published.size() - listened.size(), published.size());
        assertEquals(listened, tail);
        assertInstanceOf(TopologyClosedEvent.class, published.get(published.size() - 1));
        assertTrue(published.stream().anyMatch(e -> e instanceof ConnectionPoolEvent));

        // Subscribing after close completes at once.
        CountDownLatch late = new CountDownLatch(1);
        cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
            @Override public void onSubscribe(Flow.Subscription s) { }
            @Override public void onNext(MooringEvent item) { }
            @Override public void onError(Throwable t) { }
            @Override public void onComplete() { late.countDown(); }
        });
        assertTrue(late.await(30, TimeUnit.SECONDS));
    }

    @Test
    void aCancelledSubscriptionReceivesNothingMore() throws InterruptedException {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            List<MooringEvent> received = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch cancelled = new CountDownLatch(1);
            cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
                private Flow.Subscription subscription;
                @Override public void onSubscribe(Flow.Subscription s) { subscription = s; s.request(Long.MAX_VALUE); }
                @Override public void onNext(MooringEvent item) {
                    received.add(item);
                    if (item instanceof ConnectionCheckedInEvent) {
                        subscription.cancel();
                        cancelled.countDown();
                    }
                }
                @Override public void onError(Throwable t) { }
                @Override public void onComplete() { }
            });
            cluster.runCommand("admin", ping()).join();
            assertTrue(cancelled.await(30, TimeUnit.SECONDS));
            int atCancel = received.size();
            for (int i = 0; i < 3; i++) cluster.runCommand("admin", ping()).join();
            assertEquals(atCancel, received.size());
            assertInstanceOf(ConnectionCheckedInEvent.class, received.get(received.size() - 1));
        }
    }

    @Test
    void aSubscriberThatFallsBehindIsToldHowManyEventsItMissed() throws InterruptedException {
        // The buffer is small enough for 10 commands without demand to overflow it, and large enough
        // for one command's events (3 pool + 2 command events) to fit while a loaded machine delays
        // delivery: with a buffer of 4, those 5 events could overflow it again (a second drop report
        // instead of the check-in this test waits for).
        final int capacity = 16;
        ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(uri).eventBufferCapacity(capacity);
        try (JavaMongoCluster cluster = MongoClusters.create(builder)) {
            cluster.runCommand("admin", ping()).join();
            List<MooringEvent> received = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
            CountDownLatch subscribed = new CountDownLatch(1);
            cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
                @Override public void onSubscribe(Flow.Subscription s) { subscription.set(s); subscribed.countDown(); }
                @Override public void onNext(MooringEvent item) { received.add(item); }
                @Override public void onError(Throwable t) { }
                @Override public void onComplete() { }
            });
            assertTrue(subscribed.await(30, TimeUnit.SECONDS));
            // No demand yet: 10 commands publish at least 30 pool events, the buffer keeps 16.
            for (int i = 0; i < 10; i++) cluster.runCommand("admin", ping()).join();
            subscription.get().request(Long.MAX_VALUE);
            Await.until("the buffered events arrive", () -> received.size() >= capacity);
            cluster.runCommand("admin", ping()).join();
            // Wait for the next command's check-in after the report (not for it to be the last event: a
            // heartbeat's events may arrive after it).
            Await.until("the next events arrive", () -> {
                synchronized (received) {
                    return received.size() > capacity + 1
                            && received.subList(capacity + 1, received.size()).stream().anyMatch(e -> e instanceof ConnectionCheckedInEvent);
                }
            });
            dev.mooring.events.EventsDropped dropped = (dev.mooring.events.EventsDropped) received.get(capacity);
            assertTrue(dropped.getCount() >= 30 - capacity, "missed " + dropped.getCount());
            // After the report, the next command's checkout arrives complete and in order.
            List<Class<?>> after;
            synchronized (received) {
                after = received.subList(capacity + 1, received.size()).stream()
                        .filter(e -> e instanceof ConnectionPoolEvent).map(Object::getClass).collect(Collectors.toList());
            }
            assertEquals(List.of(ConnectionCheckOutStartedEvent.class, ConnectionCheckedOutEvent.class, ConnectionCheckedInEvent.class), after);
        }
    }

    @Test
    void aThrowingMonitorListenerDoesNotStopTheMonitor() {
        AtomicReference<Integer> heartbeats = new AtomicReference<>(0);
        ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(uri)
                .heartbeatFrequencyMS(500)
                .addServerMonitorListener(new ServerMonitorListener() {
                    @Override public void serverHeartbeatSucceeded(dev.mooring.sdam.ServerHeartbeatSucceededEvent event) {
                        throw new IllegalStateException("listener bug");
                    }
                })
                .addServerMonitorListener(new ServerMonitorListener() {
                    @Override public void serverHeartbeatSucceeded(dev.mooring.sdam.ServerHeartbeatSucceededEvent event) {
                        heartbeats.updateAndGet(n -> n + 1);
                    }
                });
        try (JavaMongoCluster cluster = MongoClusters.create(builder)) {
            Await.until("three heartbeats succeeded despite the throwing listener", () -> heartbeats.get() >= 3);
            assertEquals(ServerType.STANDALONE, cluster.topology().getServers().values().iterator().next().getType());
            assertEquals(1, cluster.runCommand("admin", ping()).join().getNumber("ok").intValue());
        }
    }

    @Test
    void aNonPositiveRequestIsAnError() throws InterruptedException {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            CountDownLatch failed = new CountDownLatch(1);
            AtomicReference<Throwable> error = new AtomicReference<>();
            cluster.events().subscribe(new Flow.Subscriber<MooringEvent>() {
                @Override public void onSubscribe(Flow.Subscription s) { s.request(0); }
                @Override public void onNext(MooringEvent item) { }
                @Override public void onError(Throwable t) { error.set(t); failed.countDown(); }
                @Override public void onComplete() { }
            });
            assertTrue(failed.await(30, TimeUnit.SECONDS));
            assertInstanceOf(IllegalArgumentException.class, error.get());
        }
    }

    @Test
    void aCommandListenerSeesTheApplicationCommandsOfRunCommandAndTheRetryableForms() {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        CommandListener listener = new CommandListener() {
            @Override public void commandStarted(CommandStartedEvent event) {
                seen.add("started " + event.getCommandName() + " " + event.getDatabaseName());
            }
            @Override public void commandSucceeded(CommandSucceededEvent event) {
                assertFalse(MooringEventTimes.duration(event).isNegative());
                seen.add("succeeded " + event.getCommandName());
            }
            @Override public void commandFailed(CommandFailedEvent event) { seen.add("failed " + event.getCommandName()); }
        };
        try (JavaMongoCluster cluster = MongoClusters.create(MongoClusters.settingsBuilder(uri).addCommandListener(listener))) {
            cluster.runCommand("admin", ping()).join();
            BsonDocument insert = new BsonDocument("insert", new BsonString("c"))
                    .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1)))));
            assertEquals(1, cluster.runRetryableWrite("app", insert).join().getNumber("n").intValue());
            BsonDocument find = new BsonDocument("find", new BsonString("c")).append("filter", new BsonDocument());
            BsonDocument reply = cluster.runRetryableRead("app", find, dev.mooring.sdam.ReadPreference.PRIMARY).join();
            assertEquals(1, reply.getDocument("cursor").getArray("firstBatch").size());
        }
        assertEquals(List.of("started ping admin", "succeeded ping", "started insert app", "succeeded insert",
                "started find app", "succeeded find"), seen);
    }
}
