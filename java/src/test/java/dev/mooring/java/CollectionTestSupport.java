package dev.mooring.java;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.mooring.cmap.CommandStartedEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/** A fresh in-memory mongo-java-server on loopback for each test, and what the collection tests share. */
abstract class CollectionTestSupport {
    protected MongoServer server;
    protected String uri;

    @BeforeEach
    void startServer() {
        server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        uri = "mongodb://127.0.0.1:" + server.getLocalAddress().getPort() + "/?serverSelectionTimeoutMS=10000";
    }

    @AfterEach
    void stopServer() {
        server.shutdownNow();
    }

    /** Waits (polling, bounded by the test's timeout) until [condition] holds. */
    static void awaitUntil(String what, BooleanSupplier condition) {
        while (!condition.getAsBoolean()) {
            if (Thread.currentThread().isInterrupted()) throw new AssertionError("interrupted waiting for " + what);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }

    /** The commands started on [cluster] from now on. */
    static List<CommandStartedEvent> recordCommands(JavaMongoCluster cluster) {
        List<CommandStartedEvent> started = Collections.synchronizedList(new ArrayList<>());
        cluster.addEventListener(e -> { if (e instanceof CommandStartedEvent s) started.add(s); });
        return started;
    }

    static long count(List<CommandStartedEvent> started, String name) {
        synchronized (started) {
            return started.stream().filter(e -> e.getCommandName().equals(name)).count();
        }
    }

    /** Records what it is given and requests only when the test tells it to. */
    static final class Recorder<T> implements Flow.Subscriber<T> {
        final List<T> received = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<Throwable> error = new AtomicReference<>();
        volatile boolean completed;
        volatile Flow.Subscription subscription;

        @Override public void onSubscribe(Flow.Subscription s) { subscription = s; }
        @Override public void onNext(T item) { received.add(item); }
        @Override public void onError(Throwable t) { error.set(t); }
        @Override public void onComplete() { completed = true; }

        boolean ended() { return completed || error.get() != null; }
    }
}
