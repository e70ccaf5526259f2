package dev.mooring.sdam.monitor

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.ServerApi
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** A standalone hello reply for scripted slow answers. */
private object DefaultHelloReply {
    fun standalone(): BsonDocument = WireServer.ok()
        .append("isWritablePrimary", org.bson.BsonBoolean.TRUE)
        .append("helloOk", org.bson.BsonBoolean.TRUE)
        .append("minWireVersion", BsonInt32(0))
        .append("maxWireVersion", BsonInt32(21))
}

private fun failHello(times: Int, vararg data: Pair<String, org.bson.BsonValue>): BsonDocument {
    val d = BsonDocument("failCommands", BsonArray(listOf(BsonString("hello"), BsonString("isMaster"))))
    data.forEach { (k, v) -> d[k] = v }
    return BsonDocument("configureFailPoint", BsonString("failCommand"))
        .append("mode", BsonDocument("times", BsonInt32(times)))
        .append("data", d)
}

/** The polling protocol against the test kit's WireServer (standalone, no topologyVersion) and mongo-java-server. */
class PollingMonitorSpec : FunSpec({
    timeout = 90.seconds.inWholeMilliseconds

    test("polling: the handshake satisfies the first check, then one hello per heartbeat on the same dedicated connection") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 500, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(3)
            val outcomes = f.handler.outcomes
            outcomes.forEach {
                it.description.type shouldBe ServerType.STANDALONE
                it.error shouldBe null
                it.clearPool shouldBe false
                it.description.roundTripTimeMillis.shouldNotBeNull()
            }
            // the handshake (legacy hello with helloOk) was the first check; then `hello` because the reply said helloOk
            server.counters.commandCount("isMaster") shouldBe 1
            server.counters.commandCount("hello") shouldBeGreaterThanOrEqual 2
            server.counters.connectionsOpened shouldBe 1
            f.monitor.rttMonitorStarted shouldBe false
            // bounded cadence: in 2 s at 500 ms per heartbeat there are at most ~5 checks, never a busy loop
            val before = f.handler.count
            delay(2_000)
            (f.handler.count - before) shouldBeLessThanOrEqual 6
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("polling heartbeat events: started then succeeded, never awaited, with the connection id") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 500, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(2)
            f.shutdown()
            val hb = f.heartbeats
            heartbeatsArePaired(hb, allowTrailingStart = false) shouldBe true
            hb.filterIsInstance<ServerHeartbeatStartedEvent>().all { !it.awaited && it.address == server.address } shouldBe true
            val ok = hb.filterIsInstance<ServerHeartbeatSucceededEvent>()
            ok.size shouldBeGreaterThanOrEqual 2
            ok.all { !it.awaited && it.connectionId != null && it.reply["ok"] != null } shouldBe true
        } finally {
            f.close()
            server.close()
        }
    }

    test("a declared Stable API makes every monitoring command `hello`") {
        val server = WireServer.start()
        val settings = ConnectionSettings(connectTimeoutMS = 5_000, serverApi = ServerApi("1"))
        val f = MonitorFixture(server.address, 500, ServerMonitoringMode.POLL, connectionSettings = settings).start()
        try {
            f.handler.awaitCount(3)
            server.counters.commandCount("isMaster") shouldBe 0
            server.counters.commandCount("hello") shouldBeGreaterThanOrEqual 3
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("requestImmediateCheck wakes a sleeping monitor; a burst of requests still keeps minHeartbeatFrequencyMS between checks") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            f.monitor.requestImmediateCheck()
            // far sooner than the 60 s heartbeat
            f.handler.awaitCount(2, timeoutMs = 15_000)
            val before = f.handler.count
            repeat(40) {
                f.monitor.requestImmediateCheck()
                delay(50)
            }
            // 2 s of requests: at most one check per 500 ms (+1 for the edges)
            (f.handler.count - before) shouldBeLessThanOrEqual 5
            (f.handler.count - before) shouldBeGreaterThanOrEqual 1
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("requestImmediateCheck during a check in progress is ignored") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "hello") Reply.Delayed(1_000, Reply.Document(DefaultHelloReply.standalone())) else null }
            f.monitor.requestImmediateCheck()
            eventually("the slow check has started") { server.counters.commandCount("hello") == 1 }
            repeat(5) { f.monitor.requestImmediateCheck() }
            f.handler.awaitCount(2)
            delay(1_500)
            f.handler.count shouldBe 2 // the requests made mid-check did not cause another one
            server.counters.commandCount("hello") shouldBe 1
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("a command error (ShutdownInProgress) marks Unknown, clears the pool without interrupting, closes the connection, and waits") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            server.configureFailPoint(failHello(1, "errorCode" to BsonInt32(91)))
            f.monitor.requestImmediateCheck()
            val failed = f.handler.await(1) { it.error != null }
            failed.description.type shouldBe ServerType.UNKNOWN
            failed.description.error.shouldNotBeNull()
            failed.clearPool shouldBe true
            failed.interruptInUseConnections shouldBe false
            val e = failed.error.shouldBeInstanceOf<MongoCommandException>()
            e.code shouldBe 91
            eventually("the monitoring connection is closed") { server.counters.currentlyOpen == 0 }
            // a command error is not retried at once: nothing more until the next heartbeat or request
            delay(1_000)
            f.handler.count shouldBe 2
            f.monitor.roundTripTimeMillis shouldBe null
            f.monitor.requestImmediateCheck()
            val recovered = f.handler.await(2)
            recovered.description.type shouldBe ServerType.STANDALONE
            server.counters.connectionsOpened shouldBe 2
            f.heartbeats.filterIsInstance<ServerHeartbeatFailedEvent>() shouldHaveSize 1
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("a network error on a known server reports Unknown, then retries once at once; the retry's failure waits for the heartbeat") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            server.close() // the server goes away: the next check fails with a network error
            f.monitor.requestImmediateCheck()
            val first = f.handler.await(1) { it.error != null }
            first.error.shouldBeInstanceOf<MongoNetworkException>()
            first.clearPool shouldBe true
            first.description.type shouldBe ServerType.UNKNOWN
            // the immediate retry (no sleep, no request) also fails: the server was Unknown by then
            val second = f.handler.await(2) { it.error != null }
            second.clearPool shouldBe true
            delay(1_500)
            f.handler.count shouldBe 3
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("a network error on a known server is retried once at once and the retry succeeds") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            server.configureFailPoint(failHello(1, "closeConnection" to org.bson.BsonBoolean.TRUE))
            f.monitor.requestImmediateCheck()
            f.handler.await(1) { it.error != null }.error.shouldBeInstanceOf<MongoNetworkException>()
            // well before the 60 s heartbeat, the retry on a new connection succeeds
            val retried = f.handler.await(2, timeoutMs = 15_000)
            retried.description.type shouldBe ServerType.STANDALONE
            server.counters.connectionsOpened shouldBe 2
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("a polling hello that times out reports a network timeout: clear with interruptInUseConnections") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL, connectTimeoutMS = 300).start()
        try {
            f.handler.awaitCount(1)
            // from now on hello is answered after 5 s, far beyond the monitoring socket timeout (connectTimeoutMS)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "hello" || ctx.commandName == "isMaster") Reply.Delayed(5_000, Reply.Document(WireServer.ok())) else null }
            f.monitor.requestImmediateCheck()
            val failed = f.handler.await(1) { it.error != null }
            failed.error.shouldBeInstanceOf<MongoNetworkTimeoutException>()
            failed.clearPool shouldBe true
            failed.interruptInUseConnections shouldBe true
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("a handler that throws does not stop the monitor") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, 500, ServerMonitoringMode.POLL, onOutcome = { throw IllegalStateException("boom") }).start()
        try {
            f.handler.awaitCount(3)
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("cancelCheck aborts an in-progress check without reporting it; the next check uses a new connection") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL, connectTimeoutMS = 30_000).start()
        try {
            f.handler.awaitCount(1)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "hello") Reply.Delayed(20_000, Reply.Document(WireServer.ok())) else null }
            f.monitor.requestImmediateCheck()
            eventually("the slow check has started") { server.counters.commandCount("hello") == 1 }
            f.monitor.cancelCheck()
            eventually("the cancelled check published its failed heartbeat") {
                f.heartbeats.any { it is ServerHeartbeatFailedEvent }
            }
            f.handler.count shouldBe 1 // not reported: the topology already marked the server Unknown
            server.handler = { _, _, _ -> null }
            f.monitor.requestImmediateCheck()
            val next = f.handler.await(1)
            next.description.type shouldBe ServerType.STANDALONE
            server.counters.connectionsOpened shouldBe 2
            f.handler.outcomes.none { it.clearPool } shouldBe true
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("close() stops the coroutine and closes the socket; start() after close does nothing") {
        val server = WireServer.start()
        val f = MonitorFixture(server.address, 500, ServerMonitoringMode.POLL).start()
        try {
            f.handler.awaitCount(1)
            withTimeout(5_000) { f.monitor.close() }
            f.parentJob.children.toList().shouldBeEmpty()
            eventually("the server saw the socket close") { server.counters.currentlyOpen == 0 }
            val n = f.handler.count
            f.monitor.start()
            delay(1_200)
            f.handler.count shouldBe n
            f.parentJob.children.toList().shouldBeEmpty()
            f.monitor.close() // idempotent
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("close() called from the monitor's own handler stops it without deadlock") {
        val server = WireServer.start()
        var self: MonitorFixture? = null
        val f = MonitorFixture(server.address, 500, ServerMonitoringMode.POLL, onOutcome = { self!!.monitor.close() })
        self = f
        f.start()
        try {
            f.handler.awaitCount(1)
            withTimeout(5_000) { f.monitor.close() } // from outside: waits until stopped
            f.parentJob.children.toList().shouldBeEmpty()
            delay(1_200)
            f.handler.count shouldBe 1
            eventually("the socket is closed") { server.counters.currentlyOpen == 0 }
        } finally {
            f.shutdown()
            server.close()
        }
    }

    test("an unreachable server gives Unknown outcomes at the heartbeat, not at once") {
        val server = WireServer.start()
        val address = server.address
        server.close()
        val f = MonitorFixture(address, heartbeatFrequencyMS = 60_000, mode = ServerMonitoringMode.POLL).start()
        try {
            val o = f.handler.await(0)
            o.description.type shouldBe ServerType.UNKNOWN
            o.clearPool shouldBe true
            o.error.shouldBeInstanceOf<MongoNetworkException>()
            delay(1_000)
            f.handler.count shouldBe 1 // the server was never known: no immediate retry
        } finally {
            f.shutdown()
        }
    }

    test("legacy server (mongo-java-server: legacy hello only, maxWireVersion 8, no topologyVersion) is polled even in stream mode") {
        val mjs = MongoServer(MemoryBackend())
        mjs.bind("127.0.0.1", 0)
        val address = ServerAddress("127.0.0.1", mjs.localAddress.port)
        val f = MonitorFixture(address, heartbeatFrequencyMS = 500, mode = ServerMonitoringMode.STREAM).start()
        try {
            f.monitor.streamingEnabled shouldBe true
            f.handler.awaitCount(3)
            f.handler.outcomes.forEach {
                it.error shouldBe null
                it.description.type shouldBe ServerType.STANDALONE
                it.description.maxWireVersion shouldBe 8
                it.description.topologyVersion shouldBe null
            }
            f.monitor.rttMonitorStarted shouldBe false
            f.heartbeats.filterIsInstance<ServerHeartbeatStartedEvent>().none { it.awaited } shouldBe true
        } finally {
            f.shutdown()
            mjs.shutdownNow()
        }
    }
})
