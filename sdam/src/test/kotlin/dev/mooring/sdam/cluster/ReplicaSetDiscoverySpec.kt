package dev.mooring.sdam.cluster

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout

/** Discovery of a replica set from one seed, hidden and arbiter members, reconfiguration. */
class ReplicaSetDiscoverySpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    test("a three-member set with an arbiter and a hidden member is discovered from one seed") {
        ReplicaSetSimulator.start(dataMembers = 3, arbiters = 1).use { rs ->
            val hidden = rs.members[2]
            rs.reconfigure { update(hidden) { it.copy(hidden = true, priority = 0.0) } }
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("heartbeatFrequencyMS=500")), listOf(recorder))
            try {
                val (primary, secondary, _) = rs.members
                val arbiter = rs.members[3]
                val seen = cluster.awaitTopology { t ->
                    t.type == TopologyType.REPLICA_SET_WITH_PRIMARY && t.servers.size == 3 &&
                        t.servers.values.none { it.type == ServerType.UNKNOWN }
                }
                seen.setName shouldBe rs.setName
                seen.servers.keys shouldContainExactlyInAnyOrder listOf(primary.address, secondary.address, arbiter.address)
                seen.servers.getValue(primary.address).type shouldBe ServerType.RS_PRIMARY
                seen.servers.getValue(secondary.address).type shouldBe ServerType.RS_SECONDARY
                seen.servers.getValue(arbiter.address).type shouldBe ServerType.RS_ARBITER
                (hidden.address in seen.servers) shouldBe false
                // Only data-bearing servers get a pool.
                cluster.runCommand("admin", ping())
                cluster.poolStatistics().keys shouldContainExactlyInAnyOrder listOf(primary.address, secondary.address)
                // The hidden member is never monitored: nothing ever connected to it.
                hidden.counters!!.connectionsOpened shouldBe 0
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("a member removed by reconfiguration leaves the topology and stops being monitored") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("heartbeatFrequencyMS=500")), listOf(recorder))
            try {
                val removed = rs.members[2]
                cluster.awaitTopology { t -> t.servers[removed.address]?.type == ServerType.RS_SECONDARY && t.hasPrimary }
                cluster.runCommand("admin", ping(), dev.mooring.sdam.ReadPreference.NEAREST) // may create pools everywhere
                rs.reconfigure { remove(removed) }
                val after = cluster.awaitTopology { t -> removed.address !in t.servers }
                after.servers.size shouldBe 2
                // The description is published first, then its events.
                withTimeout(10.seconds) { while (recorder.ofType<ServerClosedEvent>().isEmpty()) delay(10) }
                recorder.ofType<ServerClosedEvent>().map { it.address } shouldBe listOf(removed.address)
                // Its monitor and pool connections are closed and no new ones are opened.
                withTimeout(10.seconds) { while (removed.counters!!.currentlyOpen != 0) delay(20) }
                val opened = removed.counters!!.connectionsOpened
                val hellos = removed.counters!!.commandCount("hello")
                // Two other members are still monitored: wait for several of their heartbeats, then compare.
                val other = rs.members[1]
                val otherHellos = other.counters!!.commandCount("hello")
                withTimeout(20.seconds) { while (other.counters!!.commandCount("hello") < otherHellos + 3) delay(50) }
                removed.counters!!.connectionsOpened shouldBe opened
                removed.counters!!.commandCount("hello") shouldBe hellos
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})
