package dev.mooring.bench

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.bench.floor.FloorDriver
import dev.mooring.bench.floor.FloorPing
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.server.PingResponder
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.NotApplicable
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import org.bson.BsonBinaryReader
import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import java.net.InetSocketAddress
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.SocketChannel

/** The floor sends a real ping (answered ok: 1 by both servers) and runs a cell end to end. */
class FloorDriverSpec : FunSpec({
    /** Sends the floor's request bytes and decodes the OP_MSG reply's body (what the floor itself never does). */
    fun pingOnce(port: Int): BsonDocument = SocketChannel.open(InetSocketAddress("127.0.0.1", port)).use { ch ->
        val out = FloorPing.encoded()
        while (out.hasRemaining()) ch.write(out)
        val header = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
        while (header.hasRemaining()) check(ch.read(header) >= 0)
        header.getInt(12) shouldBe 2013 // OP_MSG
        val rest = ByteBuffer.allocate(header.getInt(0) - 16).order(ByteOrder.LITTLE_ENDIAN)
        while (rest.hasRemaining()) check(ch.read(rest) >= 0)
        rest.flip()
        rest.getInt() shouldBe 0 // flagBits
        rest.get() shouldBe 0.toByte() // kind-0 section
        BsonDocumentCodec().decode(BsonBinaryReader(rest.slice()), DecoderContext.builder().build())
    }

    fun <T> withResponder(block: (Int) -> T): T {
        val responder = PingResponder.bind()
        val thread = Thread(responder::run, "responder-floor-test").apply { isDaemon = true; start() }
        try {
            return block(responder.port)
        } finally {
            responder.close()
            thread.join(5_000)
        }
    }

    test("the floor's pre-encoded ping is answered ok: 1 by the responder and by mongo-java-server") {
        withResponder { port -> pingOnce(port)["ok"]!!.asNumber().doubleValue() shouldBe 1.0 }
        val server = MongoServer(MemoryBackend())
        try {
            server.bind("127.0.0.1", 0)
            pingOnce(server.localAddress.port)["ok"]!!.asNumber().doubleValue() shouldBe 1.0
        } finally {
            server.shutdownNow()
        }
    }

    test("a ping cell runs min(callers, maxPoolSize) threads and reports throughput, CPU and fairness") {
        withResponder { port ->
            val cmd = CellCommand(Scenario.PING_RESPONDER, callers = 64, maxPoolSize = 3, target = "mongodb://127.0.0.1:$port/?", warmupMs = 100, measureMs = 300)
            val m = FloorDriver().ping(cmd)
            m.getValue("connectionsCreated") shouldBe 3.0
            m.getValue("opsPerSec") shouldBeGreaterThan 0.0
            m.getValue("ops") shouldBeGreaterThan 0.0
            m.containsKey("cpuUsPerOp") shouldBe true
            m.containsKey("maxWaitUs") shouldBe false // no pool, no checkout wait
        }
    }

    test("a server that closes its connections fails the cell with an error instead of hanging") {
        java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress()).use { server ->
            // Accepts both connections, reads a little of the first request, then closes them.
            val closer = Thread {
                val sockets = (0 until 2).map { server.accept() }
                sockets.forEach { it.getInputStream().read(ByteArray(8)) }
                sockets.forEach { it.close() }
            }.apply { isDaemon = true; start() }
            val cmd = CellCommand(Scenario.PING_RESPONDER, callers = 2, maxPoolSize = 2, target = "mongodb://127.0.0.1:${server.localPort}/?", warmupMs = 100, measureMs = 200)
            val e = shouldThrow<IllegalStateException> { FloorDriver().ping(cmd) }
            (e.cause is java.io.IOException) shouldBe true
            closer.join(5_000)
        }
    }

    test("scenarios other than ping are not applicable, and the target must be a mongodb URI") {
        val d = FloorDriver()
        for (s in listOf(Scenario.COLD_START, Scenario.POOL_ONLY, Scenario.WAITERS_100K, Scenario.FAILOVER_STREAM)) {
            shouldThrow<NotApplicable> {
                when (s) {
                    Scenario.COLD_START -> d.coldStart(CellCommand(s))
                    Scenario.POOL_ONLY -> d.poolOnly(CellCommand(s))
                    Scenario.WAITERS_100K -> d.waiters(CellCommand(s))
                    else -> d.failover(CellCommand(s))
                }
            }
        }
        FloorDriver.serverAddress("mongodb://127.0.0.1:4242/?maxPoolSize=10").port shouldBe 4242
        shouldThrow<IllegalArgumentException> { FloorDriver.serverAddress("http://x/?") }
    }
})
