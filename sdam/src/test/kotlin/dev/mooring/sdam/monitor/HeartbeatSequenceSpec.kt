package dev.mooring.sdam.monitor

import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.testkit.server.StreamingHello
import dev.mooring.testkit.server.WireServer
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe

/**
 * The heartbeat sequence server-monitoring.md requires of each serverMonitoringMode against a
 * server that does (MongoDB 4.4+: topologyVersion in its hello) or does not support streaming:
 * the handshake is the first, not-awaited check; with streaming enabled and a topologyVersion the
 * next check is an awaited (streaming) one; polling (mode poll, or a server without
 * topologyVersion) keeps every check not-awaited.
 */
class HeartbeatSequenceSpec : FunSpec({
    /** The awaited flags of the first [n] heartbeat events (started and succeeded) of a monitor in [mode]. */
    suspend fun firstAwaitedFlags(mode: ServerMonitoringMode, streamingServer: Boolean, n: Int): List<Pair<String, Boolean>> {
        val server = WireServer.start().also { if (streamingServer) it.streaming = StreamingHello() }
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 500, mode = mode).start()
        try {
            eventually("$n heartbeat events") { f.heartbeats.size >= n }
            return f.heartbeats.take(n).map {
                when (it) {
                    is ServerHeartbeatStartedEvent -> "started" to it.awaited
                    is ServerHeartbeatSucceededEvent -> "succeeded" to it.awaited
                    else -> "failed" to false
                }
            }
        } finally {
            f.shutdown()
            server.close()
        }
    }

    val awaitedAfterFirst = listOf("started" to false, "succeeded" to false, "started" to true)
    val polled = listOf("started" to false, "succeeded" to false, "started" to false, "succeeded" to false)

    test("stream against a 4.4+ server: the check after the first successful one is awaited") {
        firstAwaitedFlags(ServerMonitoringMode.STREAM, streamingServer = true, n = 3) shouldContainExactly awaitedAfterFirst
    }

    test("auto (no FaaS platform) against a 4.4+ server: the check after the first successful one is awaited") {
        firstAwaitedFlags(ServerMonitoringMode.AUTO, streamingServer = true, n = 3) shouldContainExactly awaitedAfterFirst
    }

    test("poll against a 4.4+ server: every check is a not-awaited hello") {
        firstAwaitedFlags(ServerMonitoringMode.POLL, streamingServer = true, n = 4) shouldContainExactly polled
    }

    test("stream against a server without topologyVersion: polls") {
        firstAwaitedFlags(ServerMonitoringMode.STREAM, streamingServer = false, n = 4) shouldContainExactly polled
    }

    test("a topology change answers the awaiting streamed hello at once, with the new topologyVersion") {
        val server = WireServer.start()
        val streaming = StreamingHello().also { server.streaming = it }
        // a long heartbeat: only the change can answer the awaited hello within the wait below
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
        try {
            f.handler.awaitCount(1)
            eventually("an awaited hello is pending") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
            streaming.changeTopology()
            val second = f.handler.await(from = 1)
            second.description.topologyVersion?.counter shouldBe 1L
        } finally {
            f.shutdown()
            server.close()
        }
    }
})
