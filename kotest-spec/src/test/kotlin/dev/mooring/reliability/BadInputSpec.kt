package dev.mooring.reliability

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoProtocolException
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.proxy.Direction
import dev.mooring.testkit.proxy.Fault
import dev.mooring.testkit.proxy.FaultProxy
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** Bad input from servers: oversized replies, huge host lists, garbage handshakes. */
class BadInputSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    test("a reply announcing more than maxMessageSizeBytes is rejected from its header, before the body is read or buffered") {
        // the server sends only a header claiming 48,000,001 bytes and then nothing: a client that
        // tried to buffer the body would wait for it until connectTimeoutMS; ours fails at once
        HeaderOnlyServer(48_000_001).use { server ->
            val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 60_000))
            try {
                val conn = factory.create(server.address, 1, 0)
                val start = System.nanoTime()
                val e = shouldThrow<MongoProtocolException> { withContext(Dispatchers.Default) { withTimeout(30.seconds) { conn.establish() } } }
                e.message shouldContain "larger"
                ((System.nanoTime() - start) / 1_000_000 < 30_000) shouldBe true
                conn.isClosed shouldBe true
            } finally {
                factory.awaitClosed()
            }
        }
    }

    test("after the handshake, the server's own smaller maxMessageSizeBytes applies to replies") {
        WireServer.start().use { server ->
            server.hello = { _, _ -> DEFAULT_HELLO().append("maxMessageSizeBytes", BsonInt32(4_096)) }
            server.handler = { ctx, _, _ -> if (ctx.commandName != "find") null else dev.mooring.testkit.server.Reply.Document(BsonDocument("ok", BsonInt32(1)).append("blob", BsonString("x".repeat(8_000)))) }
            val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000))
            try {
                val conn = factory.create(ServerAddress("127.0.0.1", server.port), 1, 0)
                withContext(Dispatchers.Default) { conn.establish() }
                conn.description!!.maxMessageSizeBytes shouldBe 4_096
                val e = shouldThrow<MongoProtocolException> { withContext(Dispatchers.Default) { conn.command("admin", BsonDocument("find", BsonString("c"))) } }
                e.message shouldContain "larger"
                conn.isClosed shouldBe true
            } finally {
                factory.awaitClosed()
            }
        }
    }

    test("a hello listing 3,000 hosts adds them all, but at most ${DefaultConnectionFactory.MAX_MONITORING_CONNECTIONS_ESTABLISHING} monitors connect at once") {
        // every listed host is a distinct loopback address on one port where a listener accepts and never answers,
        // so each monitor's first check hangs until connectTimeoutMS: without a cap, 3,000 sockets would open at once
        Blackhole().use { hole ->
            val hosts = (0 until 3_000).map { i -> "127.0.${1 + i / 250}.${1 + i % 250}:${hole.port}" }
            WireServer.start().use { seed ->
                val me = "127.0.0.1:${seed.port}"
                seed.hello = { _, _ ->
                    DEFAULT_HELLO().append("setName", BsonString("big")).append("hosts", BsonArray((listOf(me) + hosts).map { BsonString(it) }))
                        .append("isWritablePrimary", org.bson.BsonBoolean.TRUE).append("me", BsonString(me)).append("primary", BsonString(me))
                }
                val inFlight = AtomicInteger()
                val maxInFlight = AtomicInteger()
                val listener = dev.mooring.events.EventListener { e: MooringEvent ->
                    when (e) {
                        is ServerHeartbeatStartedEvent -> maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), ::maxOf)
                        is ServerHeartbeatSucceededEvent, is ServerHeartbeatFailedEvent -> inFlight.decrementAndGet()
                        else -> Unit
                    }
                }
                val cluster = MongoCluster(
                    MongoClusterSettings.fromUri("mongodb://$me/?replicaSet=big&connectTimeoutMS=1500&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000"),
                    listOf(listener),
                )
                try {
                    val t = withTimeout(20.seconds) { cluster.topology.first { it.servers.size == 3_001 } }
                    t.servers.values.count { it.type == ServerType.UNKNOWN } shouldBe 3_000
                    // let a few waves of first checks pass
                    withTimeout(30.seconds) { while (hole.accepted.get() < 3 * DefaultConnectionFactory.MAX_MONITORING_CONNECTIONS_ESTABLISHING) delay(20) }
                    // heartbeats may be in flight for every host (waiting for a slot); sockets may not
                    // a slot is freed when a handshake fails; Ktor closes that socket asynchronously and the
                    // listener reaps it a moment later, so sockets still closing may briefly add to the cap
                    hole.maxOpen.get() shouldBeLessThanOrEqual 2 * DefaultConnectionFactory.MAX_MONITORING_CONNECTIONS_ESTABLISHING
                } finally {
                    withTimeout(30.seconds) { cluster.closeSuspending() }
                }
                ClusterInternals.rootJob(cluster).children.toList() shouldBe emptyList()
                println("3,000 hosts: at most ${maxInFlight.get()} heartbeats in flight, ${hole.maxOpen.get()} sockets open at once, ${hole.accepted.get()} accepted")
            }
        }
    }

    test("a server that answers the handshake with garbage is Unknown with an error, does not poison the pool, and recovers") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        try {
            FaultProxy.start(ServerAddress("127.0.0.1", server.localAddress.port)).use { proxy ->
                val recorder = EventRecorder()
                val cluster = MongoCluster(
                    MongoClusterSettings.fromUri("mongodb://${proxy.address}/?directConnection=true&heartbeatFrequencyMS=500&connectTimeoutMS=1000&serverSelectionTimeoutMS=1500"),
                    listOf(recorder),
                )
                try {
                    withTimeout(20.seconds) { cluster.topology.first { it.servers.values.single().type == ServerType.STANDALONE } }
                    cluster.runCommand("test", insertOne())
                    proxy[Direction.DOWNSTREAM] = Fault.Corrupt
                    proxy.resetAll() // the monitor and the pool reconnect and get garbage from the first byte
                    val unknown = withTimeout(20.seconds) { cluster.topology.first { it.servers.values.single().type == ServerType.UNKNOWN } }
                    unknown.servers.values.single().error.shouldNotBeNull()
                    // operations fail with typed errors and leave nothing checked out
                    repeat(4) { // each waits serverSelectionTimeoutMS for a server that stays Unknown
                        val r = runCatching { cluster.runCommand("test", insertOne()) }
                        (r.exceptionOrNull() is dev.mooring.events.MooringException) shouldBe true
                    }
                    cluster.poolStatistics().values.forEach { it.inUseConnections shouldBe 0 }
                    proxy.heal()
                    withTimeout(20.seconds) { cluster.topology.first { it.servers.values.single().type == ServerType.STANDALONE } }
                    withTimeout(20.seconds) {
                        while (runCatching { cluster.runCommand("test", insertOne()) }.isFailure) delay(50)
                    }
                    repeat(50) { cluster.runCommand("test", insertOne()) }
                    val s = cluster.poolStatistics().values.single()
                    s.inUseConnections shouldBe 0
                    s.totalConnections shouldBe s.availableConnections
                } finally {
                    cluster.closeSuspending()
                }
                recorder.ofType<ConnectionClosedEvent>().size shouldBe recorder.ofType<ConnectionCreatedEvent>().size
                (recorder.ofType<ConnectionCreatedEvent>().size) shouldBeGreaterThan 0
            }
        } finally {
            server.shutdownNow()
        }
    }
})

private fun DEFAULT_HELLO(): BsonDocument = BsonDocument("ok", BsonInt32(1))
    .append("isWritablePrimary", org.bson.BsonBoolean.TRUE)
    .append("helloOk", org.bson.BsonBoolean.TRUE)
    .append("minWireVersion", BsonInt32(0))
    .append("maxWireVersion", BsonInt32(21))
    .append("maxBsonObjectSize", BsonInt32(16 * 1024 * 1024))
    .append("maxMessageSizeBytes", BsonInt32(48_000_000))
    .append("maxWriteBatchSize", BsonInt32(100_000))

/** Accepts one connection, reads the request, answers with a 16-byte header announcing [announced] bytes, then stays silent. */
private class HeaderOnlyServer(private val announced: Int) : AutoCloseable {
    private val server = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    private val sockets = Collections.synchronizedList(ArrayList<Socket>())
    val address: ServerAddress get() = ServerAddress("127.0.0.1", server.localPort)

    init {
        thread(isDaemon = true, name = "header-only-server") {
            while (true) {
                val s = try {
                    server.accept()
                } catch (_: Exception) {
                    return@thread
                }
                sockets += s
                thread(isDaemon = true) {
                    runCatching {
                        val input = s.getInputStream()
                        val header = input.readNBytes(16)
                        val len = (header[0].toInt() and 0xff) or ((header[1].toInt() and 0xff) shl 8) or ((header[2].toInt() and 0xff) shl 16) or ((header[3].toInt() and 0xff) shl 24)
                        input.readNBytes(len - 16)
                        val reqId = header.copyOfRange(4, 8)
                        val out = ByteArray(16)
                        fun put(at: Int, v: Int) { for (k in 0..3) out[at + k] = (v shr (8 * k)).toByte() }
                        put(0, announced)
                        put(4, 99)
                        reqId.copyInto(out, 8)
                        put(12, 2013)
                        s.getOutputStream().apply { write(out); flush() }
                    }
                }
            }
        }
    }

    override fun close() {
        server.close()
        synchronized(sockets) { sockets.forEach { runCatching { it.close() } } }
    }
}

/** Listens on every loopback address of one port; accepts and never answers. Counts sockets. */
private class Blackhole : AutoCloseable {
    private val server = ServerSocket().apply {
        reuseAddress = true
        bind(InetSocketAddress("0.0.0.0", 0), 4096)
    }
    private val open = Collections.synchronizedSet(HashSet<Socket>())
    val port: Int get() = server.localPort
    val accepted = AtomicInteger()
    val maxOpen = AtomicInteger()

    init {
        thread(isDaemon = true, name = "blackhole") {
            while (true) {
                val s = try {
                    server.accept()
                } catch (_: Exception) {
                    return@thread
                }
                accepted.incrementAndGet()
                open += s
                // a closed peer shows as EOF: reap it so "open" counts live client sockets
                thread(isDaemon = true) {
                    runCatching { while (s.getInputStream().read(ByteArray(1024)) >= 0) Unit }
                    open -= s
                    runCatching { s.close() }
                }
                maxOpen.accumulateAndGet(open.size, ::maxOf)
            }
        }
    }

    override fun close() {
        server.close()
        synchronized(open) { open.toList() }.forEach { runCatching { it.close() } }
    }
}
