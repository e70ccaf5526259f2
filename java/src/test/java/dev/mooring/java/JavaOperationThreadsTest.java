package dev.mooring.java;

import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where the facade runs what: a single operation starts on the calling thread and completes on
 * the cluster's event loops (one wake-up of a waiting Java thread per reply, no hop through
 * {@code Dispatchers.Default}); a function of the caller's (a lent connection's) never runs on
 * an event loop, whose thread must not block.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JavaOperationThreadsTest extends CollectionTestSupport {
    private static final BsonDocument PING = new BsonDocument("ping", new BsonInt32(1));

    @Test
    void aSingleOperationCompletesOnAnEventLoopNotOnTheDefaultDispatcher() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            cluster.runCommand("admin", PING).join();
            String caller = Thread.currentThread().getName();
            List<String> completedOn = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                // the name of the thread that completed the future (the caller's if it was complete already)
                completedOn.add(cluster.runCommand("admin", PING).thenApply(reply -> Thread.currentThread().getName()).join());
            }
            for (String name : completedOn) {
                assertTrue(name.startsWith("mooring-loop-") || name.equals(caller), "completed on " + name);
                assertFalse(name.startsWith("DefaultDispatcher-worker"), "completed on " + name);
            }
            assertTrue(completedOn.stream().anyMatch(n -> n.startsWith("mooring-loop-")), "no reply completed on a loop: " + completedOn);
        }
    }

    @Test
    void aLentConnectionsFunctionRunsOffTheEventLoops() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            String ranOn = cluster.withConnection(connection ->
                CompletableFuture.completedFuture(Thread.currentThread().getName())).join();
            assertFalse(ranOn.startsWith("mooring-loop-"), "the caller's function ran on " + ranOn);
        }
    }
}
