package dev.mooring.integration

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.OpQuery
import dev.mooring.cmap.internal.wire.OpReply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.nondeterministic.eventually
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.io.DataInputStream
import java.net.Socket
import kotlin.time.Duration.Companion.seconds

/** The test-kit server itself: legacy OP_QUERY, checksums, built-ins, counters, scale, shutdown. */
class WireServerSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun exchange(socket: Socket, bytes: ByteArray): Pair<MessageHeader, ByteArray> {
        socket.getOutputStream().write(bytes)
        val input = DataInputStream(socket.getInputStream())
        val h = ByteArray(16).also { input.readFully(it) }
        val header = MessageHeader.parse(h, 48_000_000)
        return header to h + ByteArray(header.bodyLength).also { input.readFully(it) }
    }

    test("a legacy OP_QUERY isMaster gets an OP_REPLY; other OP_QUERY commands are refused") {
        val server = WireServer.start()
        try {
            withContext(Dispatchers.IO) {
                Socket("127.0.0.1", server.port).use { s ->
                    val q = OpQuery(41, 0, "admin.\$cmd", 0, -1, BsonDocument("isMaster", BsonInt32(1)).append("helloOk", BsonBoolean.TRUE))
                    val (h, all) = exchange(s, OpQuery.encode(q))
                    val reply = OpReply.decode(h, all.copyOfRange(16, all.size))
                    reply.responseTo shouldBe 41
                    reply.documents.single()["ismaster"] shouldBe BsonBoolean.TRUE
                    reply.documents.single()["helloOk"] shouldBe BsonBoolean.TRUE
                    val (h2, all2) = exchange(s, OpQuery.encode(OpQuery(42, 0, "admin.\$cmd", 0, -1, BsonDocument("ping", BsonInt32(1)))))
                    OpReply.decode(h2, all2.copyOfRange(16, all2.size)).documents.single()["code"] shouldBe BsonInt32(352)
                }
            }
            server.counters.commandCount("isMaster") shouldBe 1
        } finally {
            server.close()
        }
    }

    test("OP_MSG requests with checksums and document sequences are understood") {
        val server = WireServer.start()
        try {
            withContext(Dispatchers.IO) {
                Socket("127.0.0.1", server.port).use { s ->
                    val body = BsonDocument("insert", BsonString("c")).append("\$db", BsonString("d"))
                    val docs = listOf(BsonDocument("x", BsonInt32(1)), BsonDocument("x", BsonInt32(2)))
                    val msg = OpMsg(7, 0, OpMsg.CHECKSUM_PRESENT, body, listOf(dev.mooring.cmap.internal.wire.DocumentSequence("documents", docs)))
                    val (h, all) = exchange(s, OpMsgCodec.encode(msg))
                    val reply = OpMsgCodec.decode(h, all.copyOfRange(0, 16), all.copyOfRange(16, all.size))
                    reply.body["n"] shouldBe BsonInt32(2)
                }
            }
            server.collections.documents("d", "c").map { it["x"] } shouldBe listOf(BsonInt32(1), BsonInt32(2))
        } finally {
            server.close()
        }
    }

    test("built-ins: ping, buildInfo, endSessions, insert/find/delete, CommandNotFound") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            c.command("admin", BsonDocument("buildInfo", BsonInt32(1)))["version"] shouldBe BsonString("7.0.0")
            c.command("admin", BsonDocument("endSessions", BsonArray()))["ok"]!!.asNumber().intValue() shouldBe 1
            val docs = BsonArray((1..3).map { BsonDocument("k", BsonInt32(it % 2)) })
            c.command("t", BsonDocument("insert", BsonString("c")).append("documents", docs))["n"] shouldBe BsonInt32(3)
            val found = c.command("t", BsonDocument("find", BsonString("c")).append("filter", BsonDocument("k", BsonInt32(1))))
            found.getDocument("cursor").getArray("firstBatch").size shouldBe 2
            val deletes = BsonArray(listOf(BsonDocument("q", BsonDocument("k", BsonInt32(1))).append("limit", BsonInt32(0))))
            c.command("t", BsonDocument("delete", BsonString("c")).append("deletes", deletes))["n"] shouldBe BsonInt32(2)
            server.collections.documents("t", "c").size shouldBe 1
            shouldThrow<MongoCommandException> { c.command("admin", BsonDocument("frobnicate", BsonInt32(1))) }.code shouldBe 59
            server.counters.commandCount("frobnicate") shouldBe 1
        }
    }

    test("hundreds of concurrent connections, counted, then closed") {
        val server = WireServer.start()
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 20_000, socketTimeoutMS = 20_000))
        try {
            val conns = coroutineScope {
                (1..200).map { i ->
                    async {
                        val c = factory.create(server.address, i.toLong(), 0)
                        c.establish()
                        c.command("admin", BsonDocument("ping", BsonInt32(1)))
                        c
                    }
                }.awaitAll()
            }
            server.counters.connectionsOpened shouldBe 200
            server.counters.currentlyOpen shouldBe 200
            server.counters.commandCount("ping") shouldBe 200
            server.counters.commandCount("isMaster") shouldBe 200
            conns.map { it.description!!.serverConnectionId }.toSet().size shouldBe 200
            conns.forEach { it.close() }
            eventually(20.seconds) { server.counters.currentlyOpen shouldBe 0 }
            server.counters.connectionsClosed shouldBe 200
        } finally {
            factory.close()
            server.close()
        }
    }

    test("close stops accepting and drops open connections") {
        val server = WireServer.start()
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 2_000, socketTimeoutMS = 5_000))
        try {
            val c = factory.create(server.address, 1, 0).also { it.establish() }
            server.close()
            server.close()
            shouldThrow<dev.mooring.cmap.MongoNetworkException> { c.command("admin", BsonDocument("ping", BsonInt32(1))) }
            shouldThrow<dev.mooring.cmap.MongoNetworkException> { factory.create(server.address, 2, 0).establish() }
        } finally {
            factory.close()
        }
    }
})
