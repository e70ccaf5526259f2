package dev.mooring.integration

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** The Ktor connection against mongo-java-server, an independent wire-protocol implementation. */
class MongoJavaServerConnectionSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val server = MongoServer(MemoryBackend())
    server.bind("127.0.0.1", 0)
    val address = ServerAddress("127.0.0.1", server.localAddress.port)
    val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, appName = "mjs-spec"))

    afterSpec {
        factory.close()
        server.shutdownNow()
    }

    test("the legacy hello handshake fills the connection description") {
        val c = factory.create(address, 1, 3)
        c.description shouldBe null
        c.establish()
        val d = c.description!!
        d.maxWireVersion shouldBe 8
        d.helloOk shouldBe false
        d.maxBsonObjectSize shouldBe 16 * 1024 * 1024
        d.helloReply["ismaster"] shouldNotBe null
        c.id shouldBe 1L
        c.generation shouldBe 3
        c.close()
        c.isClosed shouldBe true
    }

    test("ping, then insert and find through raw commands") {
        val c = factory.create(address, 2, 0)
        c.establish()
        c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1
        val docs = BsonArray(listOf(BsonDocument("_id", BsonInt32(1)).append("x", BsonString("a")), BsonDocument("_id", BsonInt32(2))))
        val ins = c.command("test", BsonDocument("insert", BsonString("things")).append("documents", docs))
        ins["n"]!!.asNumber().intValue() shouldBe 2
        val found = c.command("test", BsonDocument("find", BsonString("things")).append("filter", BsonDocument("x", BsonString("a"))))
        val batch = found.getDocument("cursor").getArray("firstBatch")
        batch.size shouldBe 1
        batch[0].asDocument()["_id"] shouldBe BsonInt32(1)
        c.close()
    }

    test("an unknown command is a typed command error with code 59 and the connection stays usable") {
        val c = factory.create(address, 3, 5)
        c.establish()
        val e = shouldThrow<MongoCommandException> { c.command("admin", BsonDocument("noSuchCommand", BsonInt32(1))) }
        e.code shouldBe 59
        e.address shouldBe address
        e.generation shouldBe 5
        e.handshakeCompleted shouldBe true
        c.isClosed shouldBe false
        c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1
        c.close()
    }
})
