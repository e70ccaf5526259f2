package dev.mooring.integration

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.MongoProtocolException
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.events.ServerAddress
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.nondeterministic.eventually
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.booleans.shouldBeTrue
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.net.InetAddress
import java.nio.ByteBuffer
import java.nio.ByteOrder
import kotlin.time.Duration.Companion.seconds

private val ping = BsonDocument("ping", BsonInt32(1))

private fun header(length: Int, requestId: Int, responseTo: Int, opCode: Int = 2013): ByteArray =
    ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(length).putInt(requestId).putInt(responseTo).putInt(opCode).array()

/** Network, protocol and timeout failures against the scriptable test-kit server. */
class ConnectionFailureSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    test("a socket closed mid-reply is a network error and closes the connection") {
        withWireServer { server, factory ->
            val c = factory.open(server, generation = 4)
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") {
                    Reply.Raw(closeAfter = true) { reqId ->
                        OpMsgCodec.encode(OpMsg(99, reqId, 0, BsonDocument("ok", BsonInt32(1)))).copyOfRange(0, 20)
                    }
                } else null
            }
            val e = shouldThrow<MongoNetworkException> { c.command("admin", ping) }
            (e is MongoNetworkTimeoutException) shouldBe false
            e.generation shouldBe 4
            e.handshakeCompleted shouldBe true
            c.isClosed shouldBe true
        }
    }

    test("an oversized messageLength is a protocol error raised from the header alone") {
        withWireServer(ConnectionSettings(socketTimeoutMS = 0)) { server, factory ->
            val c = factory.open(server)
            // only the header is sent and the socket stays open: reading a body would hang
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") Reply.Raw { reqId -> header(2_000_000_000, 5, reqId) } else null
            }
            val e = withTimeout(20_000) { shouldThrow<MongoProtocolException> { c.command("admin", ping) } }
            e.message shouldContain "2000000000"
            e.message shouldContain "maxMessageSizeBytes"
            c.isClosed shouldBe true
        }
    }

    test("a messageLength below 16 is a protocol error") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Raw { reqId -> header(12, 5, reqId) } else null }
            shouldThrow<MongoProtocolException> { c.command("admin", ping) }.message shouldContain "less than"
        }
    }

    test("a reply with the wrong responseTo is rejected") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") {
                    Reply.Raw { reqId -> OpMsgCodec.encode(OpMsg(77, reqId + 1, 0, BsonDocument("ok", BsonInt32(1)))) }
                } else null
            }
            val e = shouldThrow<MongoProtocolException> { c.command("admin", ping) }
            e.message shouldContain "responseTo"
            c.isClosed shouldBe true
        }
    }

    test("a reply with an unknown opCode or unexpected moreToCome is rejected") {
        withWireServer { server, factory ->
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") {
                    Reply.Raw { reqId -> OpMsgCodec.encode(OpMsg(77, reqId, OpMsg.MORE_TO_COME, BsonDocument("ok", BsonInt32(1)))) }
                } else null
            }
            shouldThrow<MongoProtocolException> { factory.open(server).command("admin", ping) }.message shouldContain "moreToCome"
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Raw { reqId -> header(16, 5, reqId, 1234) } else null }
            shouldThrow<MongoProtocolException> { factory.open(server).command("admin", ping) }.message shouldContain "opCode"
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Raw { reqId -> header(16, 5, reqId, 2012) } else null }
            shouldThrow<MongoProtocolException> { factory.open(server).command("admin", ping) }.message shouldContain "OP_COMPRESSED"
        }
    }

    test("connect timeout against a server that never answers the handshake") {
        val blackhole = java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress())
        try {
            withWireServer(ConnectionSettings(connectTimeoutMS = 500)) { _, factory ->
                val c = factory.create(ServerAddress("127.0.0.1", blackhole.localPort), 1, 2)
                val e = withTimeout(20_000) { shouldThrow<MongoNetworkTimeoutException> { c.establish() } }
                e.handshakeCompleted shouldBe false
                e.generation shouldBe 2
                c.isClosed shouldBe true
            }
        } finally {
            blackhole.close()
        }
    }

    test("a refused connection is a network error, not a timeout") {
        val port = java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
        withWireServer { _, factory ->
            val e = shouldThrow<MongoNetworkException> { factory.create(ServerAddress("127.0.0.1", port), 1, 0).establish() }
            (e is MongoNetworkTimeoutException) shouldBe false
            e.handshakeCompleted shouldBe false
        }
    }

    test("an unknown host and a missing Unix domain socket are network errors") {
        withWireServer(ConnectionSettings(connectTimeoutMS = 5_000)) { _, factory ->
            val dns = shouldThrow<MongoNetworkException> { factory.create(ServerAddress("no-such-host.invalid", 27017), 1, 0).establish() }
            dns.handshakeCompleted shouldBe false
            val path = java.io.File(System.getProperty("java.io.tmpdir"), "mooring-missing-${System.nanoTime()}.sock").path
            shouldThrow<MongoNetworkException> { factory.create(ServerAddress.unixSocket(path), 1, 0).establish() }
        }
    }

    test("connections over a Unix domain socket") {
        val path = java.io.File(System.getProperty("java.io.tmpdir"), "mooring-${System.nanoTime()}.sock")
        val server = dev.mooring.testkit.server.WireServer.start(path.path)
        val factory = dev.mooring.cmap.DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000))
        try {
            server.address.isUnixSocket shouldBe true
            val c = factory.create(server.address, 1, 0).also { it.establish() }
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            c.close()
        } finally {
            factory.close()
            server.close()
            path.delete()
        }
    }

    test("cancelling establish closes the half-open connection") {
        val blackhole = java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress())
        try {
            withWireServer(ConnectionSettings(connectTimeoutMS = 0)) { _, factory ->
                val c = factory.create(ServerAddress("127.0.0.1", blackhole.localPort), 1, 0)
                coroutineScope {
                    // runs establish() up to its first suspension (connect or the handshake read) before cancelling
                    val job = launch(start = kotlinx.coroutines.CoroutineStart.UNDISPATCHED) { c.establish() }
                    job.cancel()
                    job.join()
                }
                c.isClosed shouldBe true
            }
        } finally {
            blackhole.close()
        }
    }

    test("negative timeouts are rejected when the factory is built") {
        shouldThrow<IllegalArgumentException> { dev.mooring.cmap.DefaultConnectionFactory(ConnectionSettings(socketTimeoutMS = -1)) }
    }

    test("an oversized outgoing command fails before anything is written and the connection stays usable") {
        withWireServer { server, factory ->
            server.hello = { ctx, req ->
                dev.mooring.testkit.server.DefaultHello.standalone(ctx, req)
                    .append("maxBsonObjectSize", BsonInt32(1_000)).append("maxMessageSizeBytes", BsonInt32(40_000))
            }
            val c = factory.open(server)
            c.description!!.maxBsonObjectSize shouldBe 1_000
            val big = BsonDocument("insert", org.bson.BsonString("c"))
                .append("documents", org.bson.BsonArray(listOf(BsonDocument("b", org.bson.BsonBinary(ByteArray(30_000))))))
            shouldThrow<dev.mooring.cmap.MongoMessageEncodingException> { c.command("db", big) }.message shouldContain "limit"
            val huge = BsonDocument("insert", org.bson.BsonString("c"))
                .append("documents", org.bson.BsonArray(List(3) { BsonDocument("b", org.bson.BsonBinary(ByteArray(15_000))) }))
            shouldThrow<dev.mooring.cmap.MongoMessageEncodingException> { c.command("db", huge) }
            server.counters.commandCount("insert") shouldBe 0
            c.isClosed shouldBe false
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
        }
    }

    test("the caller's command document is never mutated") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            val cmd = BsonDocument("ping", BsonInt32(1))
            c.command("admin", cmd)
            cmd shouldBe BsonDocument("ping", BsonInt32(1))
        }
    }

    test("socketTimeoutMS bounds a command") {
        withWireServer(ConnectionSettings(socketTimeoutMS = 300)) { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Delayed(60_000, Reply.Document(BsonDocument("ok", BsonInt32(1)))) else null }
            val e = withTimeout(20_000) { shouldThrow<MongoNetworkTimeoutException> { c.command("admin", ping) } }
            e.handshakeCompleted shouldBe true
            c.isClosed shouldBe true
            eventually(10.seconds) { server.counters.currentlyOpen shouldBe 0 }
        }
    }

    test("a second concurrent command on one connection fails loudly; the first completes") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            val gate = CompletableDeferred<Unit>()
            val arrived = CompletableDeferred<Unit>()
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") { arrived.complete(Unit); gate.await(); null } else null
            }
            coroutineScope {
                val first = async { c.command("admin", ping) }
                arrived.await()
                shouldThrow<IllegalStateException> { c.command("admin", ping) }.message shouldContain "single-track"
                gate.complete(Unit)
                first.await()["ok"]!!.asNumber().intValue() shouldBe 1
            }
            c.isClosed shouldBe false
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
        }
    }

    test("cancelling a command closes the connection") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            val arrived = CompletableDeferred<Unit>()
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "ping") { arrived.complete(Unit); Reply.Delayed(60_000, Reply.CloseConnection) } else null
            }
            coroutineScope {
                val job = launch { c.command("admin", ping) }
                arrived.await()
                job.cancel()
                job.join()
            }
            c.isClosed.shouldBeTrue()
            shouldThrow<MongoNetworkException> { c.command("admin", ping) }.message shouldContain "closed"
            eventually(10.seconds) { server.counters.currentlyOpen shouldBe 0 }
        }
    }

    test("close is idempotent and a closed connection fails with a network error") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            c.close()
            c.close()
            shouldThrow<MongoNetworkException> { c.command("admin", ping) }
            val unopened = factory.create(server.address, 9, 0)
            unopened.close()
            shouldThrow<MongoNetworkException> { unopened.establish() }
        }
    }

    test("closing the factory breaks its connections and refuses new ones") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            factory.close()
            shouldThrow<IllegalStateException> { factory.create(server.address, 2, 0) }
            val e = withTimeout(20_000) { runCatching { c.command("admin", ping) }.exceptionOrNull() }
            e.shouldBeInstanceOf<MongoNetworkException>()
        }
    }

    test("a failure in one connection leaves the others usable") {
        withWireServer { server, factory ->
            val a = factory.open(server, 1)
            val b = factory.open(server, 2)
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping" && ctx.connectionNumber == 1) Reply.CloseConnection else null }
            shouldThrow<MongoNetworkException> { a.command("admin", ping) }
            b.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            withContext(Dispatchers.Default) { b.isClosed shouldBe false }
        }
    }
})
