package dev.mooring.integration.compression

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoProtocolException
import dev.mooring.cmap.internal.wire.OpCompressed
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.RequestIds
import dev.mooring.cmap.internal.wire.compression.ZlibCompressor
import dev.mooring.events.ServerAddress
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.nio.ByteBuffer
import java.nio.ByteOrder
import kotlin.time.Duration.Companion.seconds

/** OP_COMPRESSED negotiated with the test kit (and mongo-java-server), checked on the server side. */
class CompressionSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    fun settings(compressors: List<String>, level: Int = -1) =
        ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, compressors = compressors, zlibCompressionLevel = level)

    suspend fun <T> withServer(serverCompressors: List<String>, block: suspend (WireServer) -> T): T {
        val server = WireServer.start()
        server.compressors = serverCompressors
        try {
            return block(server)
        } finally {
            server.close()
        }
    }

    val bigText = "compress me ".repeat(2000)

    for ((name, level) in listOf("snappy" to -1, "zlib" to -1, "zlib" to 9, "zlib" to 0, "zstd" to -1)) {
        test("$name (zlib level $level) round-trips: hello plain, later commands compressed both ways") {
            withServer(listOf(name)) { server ->
                DefaultConnectionFactory(settings(listOf(name), level)).use { f ->
                    val c = f.create(server.address, 1, 0)
                    c.establish()
                    c.description!!.compressor shouldBe name
                    val docs = (1..20).map { BsonDocument("_id", BsonInt32(it)).append("text", BsonString(bigText)) }
                    c.command("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(docs)))
                    val batch = c.command("db", BsonDocument("find", BsonString("c"))).getDocument("cursor").getArray("firstBatch")
                    batch.size shouldBe 20
                    batch.map { it.asDocument() } shouldBe docs
                    c.close()
                }
                server.counters.commandCount("isMaster") shouldBe 1
                server.counters.compressedCommandCount("isMaster") shouldBe 0
                server.counters.compressedCommandCount("insert") shouldBe 1
                server.counters.compressedCommandCount("find") shouldBe 1
            }
        }
    }

    test("authentication commands are never compressed, later commands are") {
        withServer(listOf("zlib")) { server ->
            ScramServer().also { it.addUser("admin", "alice", "pw"); it.install(server) }
            val s = settings(listOf("zlib")).copy(credential = MongoCredential("SCRAM-SHA-256", "alice", "admin", "pw".toCharArray()))
            // no speculative auth on this server: force the full conversation
            server.hello = run {
                val h = server.hello
                { ctx, cmd -> cmd.remove("speculativeAuthenticate"); h(ctx, cmd) }
            }
            DefaultConnectionFactory(s).use { f ->
                val c = f.create(server.address, 1, 0)
                c.establish()
                c.command("admin", BsonDocument("ping", BsonInt32(1)))
                c.close()
            }
            server.counters.commandCount("saslStart") shouldBe 1
            server.counters.compressedCommandCount("saslStart") shouldBe 0
            server.counters.compressedCommandCount("saslContinue") shouldBe 0
            server.counters.compressedCommandCount("ping") shouldBe 1
        }
    }

    test("the first compressor the server accepts, in the client's order, is used; none in common means none") {
        withServer(listOf("zlib", "zstd")) { server ->
            DefaultConnectionFactory(settings(listOf("snappy", "zstd", "zlib"))).use { f ->
                f.create(server.address, 1, 0).also { it.establish() }.description!!.compressor shouldBe "zstd"
            }
            DefaultConnectionFactory(settings(listOf("snappy"))).use { f ->
                val c = f.create(server.address, 2, 0).also { it.establish() }
                c.description!!.compressor shouldBe null
                c.command("admin", BsonDocument("ping", BsonInt32(1)))
            }
            server.counters.compressedCommandCount("ping") shouldBe 0
        }
    }

    test("an unknown compressor name is refused when the factory is built") {
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(listOf("lz4"))) }.message!! shouldContain "lz4"
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(listOf("zlib"), 10)) }
    }

    fun compressedReply(requestId: Int, compressorId: Byte?, sizeDelta: Int): ByteArray {
        val plain = OpMsgCodec.encode(OpMsg(RequestIds.next(), requestId, 0, BsonDocument("ok", BsonInt32(1))))
        val wrapped = OpCompressed.wrap(plain, ZlibCompressor())
        val b = ByteBuffer.wrap(wrapped).order(ByteOrder.LITTLE_ENDIAN)
        b.putInt(20, b.getInt(20) + sizeDelta)
        if (compressorId != null) wrapped[24] = compressorId
        return wrapped
    }

    for ((label, id, delta) in listOf(Triple("an unknown compressor id", 42.toByte(), 0), Triple("a size mismatch", null, 3))) {
        test("$label in a reply is a protocol error on that connection only") {
            withServer(listOf("zlib")) { server ->
                server.handler = { ctx, _, _ ->
                    if (ctx.commandName == "ping" && ctx.connectionNumber == 1) Reply.Raw { compressedReply(it, id, delta) } else null
                }
                DefaultConnectionFactory(settings(listOf("zlib"))).use { f ->
                    val bad = f.create(server.address, 1, 0).also { it.establish() }
                    val e = shouldThrow<MongoProtocolException> { bad.command("admin", BsonDocument("ping", BsonInt32(1))) }
                    e.message!! shouldContain "OP_COMPRESSED"
                    bad.isClosed shouldBe true
                    val good = f.create(server.address, 2, 0).also { it.establish() }
                    good.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]?.asNumber()?.intValue() shouldBe 1
                    good.close()
                }
            }
        }
    }

    test("a well-formed compressed reply to an uncompressed request is accepted") {
        withServer(emptyList()) { server ->
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Raw { compressedReply(it, null, 0) } else null }
            DefaultConnectionFactory(settings(emptyList())).use { f ->
                val c = f.create(server.address, 1, 0).also { it.establish() }
                c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]?.asNumber()?.intValue() shouldBe 1
            }
        }
    }

    test("mongo-java-server does not implement OP_COMPRESSED: zlib is offered, not agreed, and commands run uncompressed") {
        val mjs = MongoServer(MemoryBackend())
        mjs.bind("127.0.0.1", 0)
        try {
            DefaultConnectionFactory(settings(listOf("zlib"))).use { f ->
                val c = f.create(ServerAddress("127.0.0.1", mjs.localAddress.port), 1, 0)
                c.establish()
                c.description!!.compressor shouldBe null
                c.command("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(1))))))
                c.command("db", BsonDocument("find", BsonString("c"))).getDocument("cursor").getArray("firstBatch").size shouldBe 1
                c.close()
            }
        } finally {
            mjs.shutdownNow()
        }
    }
})
