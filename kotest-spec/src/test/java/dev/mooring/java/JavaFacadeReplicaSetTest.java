package dev.mooring.java;

import dev.mooring.events.ServerAddress;
import dev.mooring.sdam.ServerDescription;
import dev.mooring.sdam.ServerHeartbeatSucceededEvent;
import dev.mooring.sdam.ServerType;
import dev.mooring.sdam.TopologyDescription;
import dev.mooring.sdam.TopologyDescriptionChangedEvent;
import dev.mooring.sdam.TopologyType;
import dev.mooring.testkit.replset.ReplicaSetSimulator;
import dev.mooring.testkit.replset.SimulatedMember;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java facade against the test kit's replica set: failover through the ClusterListener, wire-level cancellation. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class JavaFacadeReplicaSetTest {

    private static ServerAddress primaryOf(TopologyDescription d) {
        ServerDescription p = d.getPrimary();
        return p == null ? null : p.getAddress();
    }

    private static BsonDocument insert(int id) {
        return new BsonDocument("insert", new BsonString("c"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id)))));
    }

    @Test
    void failoverIsObservedThroughTheClusterListener() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSet(3)) {
            SimulatedMember oldPrimary = rs.getMembers().get(0);
            SimulatedMember newPrimary = rs.getMembers().get(1);
            List<TopologyDescriptionChangedEvent> changes = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger heartbeats = new AtomicInteger();
            ClusterSettingsBuilder builder = MongoClusters.settingsBuilder(rs.seedUri("heartbeatFrequencyMS=500", oldPrimary))
                    .addClusterListener(new ClusterListener() {
                        @Override
                        public void clusterDescriptionChanged(TopologyDescriptionChangedEvent event) {
                            changes.add(event);
                        }
                    })
                    .addServerMonitorListener(new ServerMonitorListener() {
                        @Override
                        public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                            heartbeats.incrementAndGet();
                        }
                    });
            try (JavaMongoCluster cluster = MongoClusters.create(builder)) {
                Await.until("the listener saw the set discovered with " + oldPrimary.getHost() + " primary", () -> {
                    synchronized (changes) {
                        if (changes.isEmpty()) return false;
                        TopologyDescription d = changes.get(changes.size() - 1).getNewDescription();
                        return d.getType() == TopologyType.REPLICA_SET_WITH_PRIMARY
                                && oldPrimary.getAddress().equals(primaryOf(d))
                                && d.getServers().values().stream().filter(s -> s.getType() == ServerType.RS_SECONDARY).count() == 2;
                    }
                });
                assertTrue(heartbeats.get() > 0);
                assertEquals(1, cluster.runCommand("test", insert(1)).join().getNumber("n").intValue());
                int before = changes.size();

                JavaTestKit.kill(rs, oldPrimary);
                rs.elect(newPrimary);

                Await.until("the listener saw " + newPrimary.getHost() + " become primary and the old primary Unknown", () -> {
                    synchronized (changes) {
                        TopologyDescription d = changes.get(changes.size() - 1).getNewDescription();
                        return newPrimary.getAddress().equals(primaryOf(d))
                                && d.getServers().get(oldPrimary.getAddress()).getType() == ServerType.UNKNOWN;
                    }
                });
                List<TopologyDescriptionChangedEvent> failover;
                synchronized (changes) {
                    failover = new ArrayList<>(changes.subList(before, changes.size()));
                }
                // Each event continues from the previous one: the listener saw the changes in order.
                for (int i = 1; i < failover.size(); i++) {
                    assertEquals(failover.get(i - 1).getNewDescription(), failover.get(i).getPreviousDescription());
                }
                // The old primary lost the role before the new one took it (never two primaries).
                int lost = -1;
                int gained = -1;
                for (int i = 0; i < failover.size(); i++) {
                    TopologyDescription d = failover.get(i).getNewDescription();
                    if (lost < 0 && !oldPrimary.getAddress().equals(primaryOf(d))) lost = i;
                    if (gained < 0 && newPrimary.getAddress().equals(primaryOf(d))) gained = i;
                    assertTrue(d.getServers().values().stream().filter(s -> s.getType() == ServerType.RS_PRIMARY).count() <= 1);
                }
                assertTrue(lost >= 0 && gained >= lost, "lost=" + lost + " gained=" + gained);
                assertEquals(newPrimary.getAddress(), primaryOf(cluster.topology()));

                // Writes go to the new primary.
                assertEquals(1, cluster.runCommand("test", insert(2)).join().getNumber("n").intValue());
            }
        }
    }

    @Test
    void cancellingACommandInFlightClosesItsConnectionAndThePoolReturnsToIdle() {
        try (ReplicaSetSimulator rs = JavaTestKit.startReplicaSet(1)) {
            SimulatedMember primary = rs.getMembers().get(0);
            try (JavaMongoCluster cluster = MongoClusters.create(rs.seedUri("heartbeatFrequencyMS=500", primary))) {
                assertEquals(1, cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1))).join().getNumber("ok").intValue());
                primary.configureFailPoint(new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                        .append("mode", new BsonDocument("times", new BsonInt32(1)))
                        .append("data", new BsonDocument("failCommands", new BsonArray(List.of(new BsonString("ping"))))
                                .append("blockConnection", BsonBoolean.TRUE)
                                .append("blockTimeMS", new BsonInt64(120_000))));
                CompletableFuture<BsonDocument> blocked = cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1)));
                Await.until("the ping is on the wire", () -> cluster.poolStatistics().get(primary.getAddress()),
                        s -> s.getInUseConnections() == 1);
                assertTrue(blocked.cancel(true));
                Await.until("the pool is idle again", () -> cluster.poolStatistics().get(primary.getAddress()),
                        s -> s.getInUseConnections() == 0 && s.getWaitQueueSize() == 0 && s.getPendingConnections() == 0);
                assertTrue(blocked.isCancelled());
                // The server stays usable (the fail point fired once; the cancelled connection was discarded).
                assertEquals(1, cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1))).join().getNumber("ok").intValue());
                assertEquals(ServerType.RS_PRIMARY, cluster.topology().getServers().get(primary.getAddress()).getType());
            }
        }
    }
}
