package dev.mooring.sdam.monitor

import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import java.io.File
import kotlin.time.Duration.Companion.seconds

/**
 * Measures (does not assert) the time from `simulator.elect(member)` to that member's monitor
 * reporting it as the new primary, in streaming mode (heartbeatFrequencyMS 10 s) and polling
 * mode (heartbeatFrequencyMS 500), over 10 elections each. The numbers go to stdout and to
 * `kotest-spec/target/election-latency.txt`. The only assertion is that every election is seen.
 */
class ElectionLatencySpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds

    suspend fun measure(mode: ServerMonitoringMode, heartbeatMS: Long, elections: Int): List<Double> {
        ReplicaSetSimulator.start().use { rs ->
            val fixtures = rs.members.map { m ->
                MonitorFixture(m.address, heartbeatMS, mode).start()
            }
            try {
                fixtures.forEach { it.handler.awaitCount(1) }
                if (mode == ServerMonitoringMode.STREAM) {
                    fixtures.forEach { f ->
                        eventually("streaming started on ${f.address}") {
                            f.heartbeats.any { it is ServerHeartbeatStartedEvent && it.awaited }
                        }
                    }
                }
                val latencies = ArrayList<Double>()
                repeat(elections) { i ->
                    val target = rs.members.first { it != rs.primary }
                    val f = fixtures.first { it.address == target.address }
                    val from = f.handler.count
                    // vary the phase against the polling cadence
                    delay(50L + (i * 97L) % 400)
                    val t0 = System.nanoTime()
                    rs.elect(target)
                    val electionId = rs.electionId
                    val seen = f.handler.await(from, timeoutMs = 30_000) {
                        it.description.type == ServerType.RS_PRIMARY && it.description.electionId == electionId
                    }
                    val t1 = f.handler.receivedAtNanos(seen)
                    latencies.add((t1 - t0) / 1_000_000.0)
                }
                return latencies
            } finally {
                fixtures.forEach { it.shutdown() }
            }
        }
    }

    fun summary(name: String, l: List<Double>): String {
        val s = l.sorted()
        val p50 = if (s.size % 2 == 1) s[s.size / 2] else (s[s.size / 2 - 1] + s[s.size / 2]) / 2
        return "%s: n=%d p50=%.1f ms max=%.1f ms min=%.1f ms samples=%s".format(
            name, s.size, p50, s.last(), s.first(), l.joinToString(prefix = "[", postfix = "]") { "%.1f".format(it) },
        )
    }

    test("election to new primary in the monitor's outcome: streaming vs polling (measured, not asserted)") {
        val streaming = measure(ServerMonitoringMode.STREAM, heartbeatMS = 10_000, elections = 10)
        val polling = measure(ServerMonitoringMode.POLL, heartbeatMS = 500, elections = 10)
        val text = listOf(
            summary("streaming (heartbeatFrequencyMS=10000)", streaming),
            summary("polling (heartbeatFrequencyMS=500)", polling),
        ).joinToString("\n")
        println("ELECTION LATENCY\n$text")
        File("target").mkdirs()
        File("target/election-latency.txt").writeText(text + "\n")
        streaming.size shouldBe 10
        polling.size shouldBe 10
    }
})
