package dev.mooring.sdam.monitor

import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.internal.monitor.StreamingPolicy
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** The streaming protocol against the test kit's replica set simulator (awaitable hello with exhaust). */
class StreamingMonitorSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    test("streaming delivers a step-down at once, without waiting for heartbeatFrequencyMS") {
        ReplicaSetSimulator.start().use { rs ->
            val primary = rs.members[0]
            val f = MonitorFixture(primary.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                val first = f.handler.await(0)
                first.description.type shouldBe ServerType.RS_PRIMARY
                first.description.topologyVersion.shouldNotBeNull()
                // wait until the awaitable hello is in flight (its started event is out), then step down
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                rs.stepDown()
                // the heartbeat is 60 s: this can only come from the stream
                val after = f.handler.await(1, timeoutMs = 20_000) { it.description.type == ServerType.RS_SECONDARY }
                after.error shouldBe null
                after.clearPool shouldBe false
                after.description.topologyVersion!!.counter shouldBe primary.topologyVersion.counter
                // the streamed reply carried the RTT monitor's values
                after.description.roundTripTimeMillis.shouldNotBeNull()
                f.monitor.rttMonitorStarted shouldBe true
                // one exhaust request served both replies: the awaitable hello was sent once
                val awaited = f.heartbeats.filterIsInstance<ServerHeartbeatSucceededEvent>().filter { it.awaited }
                awaited.size shouldBeGreaterThanOrEqual 1
            } finally {
                f.shutdown()
            }
        }
    }

    test("streaming follows several changes in order and every started event is paired") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[1]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.await(0) { it.description.type == ServerType.RS_SECONDARY }
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                rs.elect(m)
                f.handler.await(1) { it.description.type == ServerType.RS_PRIMARY }
                // Count before acting: the outcome may arrive before the next line runs.
                val n = f.handler.count
                rs.stepDown(m)
                val secondary = f.handler.await(n) { it.description.type == ServerType.RS_SECONDARY }
                val m2 = f.handler.outcomes.indexOf(secondary) + 1
                rs.elect(m)
                f.handler.await(m2) { it.description.type == ServerType.RS_PRIMARY }
                val counters = f.handler.outcomes.mapNotNull { it.description.topologyVersion?.counter }
                counters shouldBe counters.sorted()
                f.handler.outcomes.none { it.error != null } shouldBe true
                f.monitor.close()
                // close() interrupted the pending awaited read: its started event got a failed event
                heartbeatsArePaired(f.heartbeats, allowTrailingStart = false) shouldBe true
                f.heartbeats.last().shouldBeInstanceOf<ServerHeartbeatFailedEvent>().awaited shouldBe true
            } finally {
                f.shutdown()
            }
        }
    }

    test("the RTT monitor samples on its own connection; poll mode opens no RTT connection") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[2]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 500, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.awaitCount(1)
                eventually("the RTT monitor started") { f.monitor.rttMonitorStarted }
                val counters = m.counters!!
                eventually("two connections: the streaming one and the RTT one") { counters.connectionsOpened == 2 }
                val helloBefore = counters.commandCount("hello")
                // the RTT connection sends a regular hello every heartbeat while the stream goes on
                eventually("RTT hellos keep coming") { counters.commandCount("hello") >= helloBefore + 3 }
                f.monitor.roundTripTimeMillis.shouldNotBeNull()
                eventually("at least two samples give a minimum") { f.monitor.minRoundTripTimeMillis >= 0.0 && f.monitor.roundTripTimeMillis != null }
                counters.connectionsOpened shouldBe 2
                // the RTT hellos publish no heartbeat events: every event is for the streaming connection (awaited) or its handshake
                val started = f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>()
                started.count { !it.awaited } shouldBe 1
            } finally {
                f.shutdown()
            }
            val before = m.counters!!.connectionsOpened
            val p = MonitorFixture(m.address, heartbeatFrequencyMS = 500, mode = ServerMonitoringMode.POLL).start()
            try {
                p.handler.awaitCount(4)
                p.monitor.rttMonitorStarted shouldBe false
                m.counters!!.connectionsOpened shouldBe before + 1
                p.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().none { it.awaited } shouldBe true
            } finally {
                p.shutdown()
            }
        }
    }

    test("a partition times the streaming read out: Unknown with clearPool and interruptInUseConnections, retried once at once") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[0]
            // streaming read timeout = connectTimeoutMS + heartbeatFrequencyMS = 1.5 s
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 1_000, mode = ServerMonitoringMode.STREAM, connectTimeoutMS = 500).start()
            try {
                f.handler.await(0) { it.description.type == ServerType.RS_PRIMARY }
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                val opened = m.counters!!.connectionsOpened
                rs.partition(m)
                val failed = f.handler.await(1, timeoutMs = 20_000) { it.error != null }
                failed.error.shouldBeInstanceOf<MongoNetworkTimeoutException>()
                failed.description.type shouldBe ServerType.UNKNOWN
                failed.clearPool shouldBe true
                failed.interruptInUseConnections shouldBe true
                f.monitor.roundTripTimeMillis shouldBe null
                // the server was known: the monitor retried at once on a new connection, whose handshake timed out too
                val retry = f.handler.await(f.handler.outcomes.indexOf(failed) + 1, timeoutMs = 20_000)
                retry.error.shouldBeInstanceOf<MongoNetworkTimeoutException>()
                retry.interruptInUseConnections shouldBe true
                // the retry's handshake got no reply, so nothing orders the server's accept before the
                // client's timeout (the kernel completed the TCP handshake): wait for the server to count it
                eventually("the retry's connection was accepted") { m.counters!!.connectionsOpened >= opened + 1 }
                rs.heal(m)
                // after healing, the next heartbeat finds the server again
                f.handler.await(f.handler.count, timeoutMs = 20_000) { it.description.type == ServerType.RS_PRIMARY }
            } finally {
                f.shutdown()
            }
        }
    }

    test("a killed member: the stream fails with a network error, Unknown is reported, the retry's failure waits for the heartbeat") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[1]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.await(0) { it.description.type == ServerType.RS_SECONDARY }
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                rs.kill(m)
                val first = f.handler.await(1) { it.error != null }
                first.clearPool shouldBe true
                first.interruptInUseConnections shouldBe false
                val second = f.handler.await(f.handler.outcomes.indexOf(first) + 1) { it.error != null }
                second.clearPool shouldBe true
                val n = f.handler.count
                delay(1_500)
                f.handler.count shouldBe n // no third attempt before the heartbeat
                rs.restart(m)
                f.monitor.requestImmediateCheck()
                f.handler.await(n) { it.description.type == ServerType.RS_SECONDARY }
            } finally {
                f.shutdown()
            }
        }
    }

    test("a streaming failure on a known server is retried once at once and the retry succeeds") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[2]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.await(0) { it.description.type == ServerType.RS_SECONDARY }
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                // the RTT task opens its own connection once streaming starts; its handshake hello
                // must be over before the fail point is set, or that hello consumes the {times: 1}
                eventually("the RTT connection is established") { f.monitor.roundTripSampleCount >= 2 }
                m.configureFailPoint(
                    BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["hello", "isMaster"], closeConnection: true}}"""),
                )
                rs.stepDown(rs.members[0]) // wakes the stream: the fail point closes the connection instead of replying
                val failed = f.handler.await(1) { it.error != null }
                failed.clearPool shouldBe true
                val recovered = f.handler.await(f.handler.outcomes.indexOf(failed) + 1, timeoutMs = 15_000)
                recovered.error shouldBe null
                recovered.description.type shouldBe ServerType.RS_SECONDARY
                recovered.description.primary shouldBe null
            } finally {
                f.shutdown()
            }
        }
    }

    test("cancelCheck interrupts a waiting streaming check; nothing is reported and the monitor reconnects on request") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[0]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.awaitCount(1)
                eventually("the streaming hello is waiting") { f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().any { it.awaited } }
                val opened = m.counters!!.connectionsOpened
                f.monitor.cancelCheck()
                eventually("the awaited heartbeat failed") { f.heartbeats.any { it is ServerHeartbeatFailedEvent && it.awaited } }
                delay(700)
                f.handler.count shouldBe 1
                f.monitor.requestImmediateCheck()
                f.handler.await(1).description.type shouldBe ServerType.RS_PRIMARY
                m.counters!!.connectionsOpened shouldBeGreaterThanOrEqual opened + 1
                f.handler.outcomes.none { it.clearPool } shouldBe true
            } finally {
                f.shutdown()
            }
        }
    }

    test("close() interrupts a pending streaming read promptly and leaves no coroutine and no socket") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[0]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.awaitCount(1)
                eventually("the RTT monitor started") { f.monitor.rttMonitorStarted }
                eventually("two sockets are open") { m.counters!!.currentlyOpen == 2 }
                // the server would only answer after maxAwaitTimeMS = 60 s: close must not wait for that
                withTimeout(10_000) { f.monitor.close() }
                f.parentJob.children.toList().shouldBeEmpty()
                eventually("the server saw both sockets close") { m.counters!!.currentlyOpen == 0 }
                val n = f.handler.count
                rs.stepDown()
                delay(500)
                f.handler.count shouldBe n
            } finally {
                f.shutdown()
            }
        }
    }

    test("serverMonitoringMode: auto polls on a FaaS platform (client.env.name), streams elsewhere") {
        val lambda = BsonDocument("env", BsonDocument("name", BsonString("aws.lambda")))
        val docker = BsonDocument("env", BsonDocument("container", BsonDocument("runtime", BsonString("docker"))))
        StreamingPolicy.streamingEnabled(ServerMonitoringMode.AUTO, lambda) shouldBe false
        StreamingPolicy.streamingEnabled(ServerMonitoringMode.AUTO, docker) shouldBe true
        StreamingPolicy.streamingEnabled(ServerMonitoringMode.AUTO, BsonDocument()) shouldBe true
        StreamingPolicy.streamingEnabled(ServerMonitoringMode.STREAM, lambda) shouldBe true
        StreamingPolicy.streamingEnabled(ServerMonitoringMode.POLL, BsonDocument()) shouldBe false
        listOf("azure.func", "gcp.func", "vercel").forEach {
            StreamingPolicy.isFaas(BsonDocument("env", BsonDocument("name", BsonString(it)))) shouldBe true
        }
    }

    test("a monitor on a cancelled parent scope stops with it") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[1]
            val f = MonitorFixture(m.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.STREAM).start()
            try {
                f.handler.awaitCount(1)
                f.parentJob.cancel()
                f.parentJob.join()
                f.parentJob.children.toList().shouldBeEmpty()
                eventually("sockets closed") { m.counters!!.currentlyOpen == 0 }
            } finally {
                f.shutdown()
            }
        }
    }
})
