package dev.mooring.sdam.cluster

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.File
import kotlin.time.Duration.Companion.seconds

/**
 * Measures (and reports, never asserts) the time from an election in the simulator to the new
 * primary appearing in `topology`, for the streaming and the polling protocol with the default
 * heartbeatFrequencyMS (10 s). Results go to stdout and kotest-spec/target/failover-latency.txt.
 */
class FailoverLatencySpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds
    val results = File("target/failover-latency.txt").also { it.parentFile.mkdirs(); it.writeText("") }

    for (mode in listOf("stream", "poll")) {
        test("election to new primary in topology, serverMonitoringMode=$mode") {
            ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
                val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverMonitoringMode=$mode")))
                try {
                    cluster.awaitTopology { it.hasPrimary && it.servers.values.count { s -> s.type == ServerType.RS_SECONDARY } == 2 }
                    val next = rs.members[1]
                    val start = System.nanoTime()
                    rs.stepDown()
                    rs.elect(next)
                    cluster.awaitTopology(30.seconds) { it.primary?.address == next.address }
                    val millis = (System.nanoTime() - start) / 1_000_000.0
                    val line = "serverMonitoringMode=$mode heartbeatFrequencyMS=10000: election -> new primary in topology in %.1f ms".format(millis)
                    println(line)
                    results.appendText(line + "\n")
                    cluster.topology.value.primary!!.address shouldBe next.address
                } finally {
                    cluster.closeAndCheckNoCoroutines()
                }
            }
        }
    }
})
