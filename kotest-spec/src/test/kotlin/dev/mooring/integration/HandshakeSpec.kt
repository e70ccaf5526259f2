package dev.mooring.integration

import dev.mooring.cmap.ClientWireVersion
import dev.mooring.cmap.ConnectionAuthenticator
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoHandshakeException
import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.cmap.ServerApi
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.types.ObjectId
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.seconds

/** The initial handshake (handshake.md) as the server sees it, and what the connection keeps. */
class HandshakeSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    suspend fun captureHandshake(settings: ConnectionSettings, factoryOf: (ConnectionSettings) -> DefaultConnectionFactory = { DefaultConnectionFactory(it) }): Pair<BsonDocument, String> {
        val server = WireServer.start()
        val seen = CopyOnWriteArrayList<Pair<BsonDocument, String>>()
        server.handler = { ctx, db, cmd -> if (seen.isEmpty()) seen.add(cmd to db); null }
        val factory = factoryOf(settings)
        try {
            factory.create(server.address, 1, 0).establish()
        } finally {
            factory.close()
            server.close()
        }
        return seen.single()
    }

    test("without Stable API or load balancing: legacy hello with helloOk over OP_MSG on admin") {
        val (cmd, db) = captureHandshake(ConnectionSettings(appName = "spec-app", compressors = listOf("zstd", "zlib")))
        db shouldBe "admin"
        cmd.keys.first() shouldBe "isMaster"
        cmd["helloOk"] shouldBe BsonBoolean.TRUE
        cmd["backpressure"] shouldBe BsonString("2")
        cmd.getDocument("client").getDocument("application")["name"] shouldBe BsonString("spec-app")
        cmd.getDocument("client").getDocument("driver")["name"] shouldBe BsonString("mooring")
        cmd["compression"] shouldBe BsonArray(listOf(BsonString("zstd"), BsonString("zlib")))
        cmd.containsKey("loadBalanced") shouldBe false
        cmd.containsKey("saslSupportedMechs") shouldBe false
    }

    test("with a declared server API: hello with apiVersion") {
        val (cmd, _) = captureHandshake(ConnectionSettings(serverApi = ServerApi("1", strict = true)))
        cmd.keys.first() shouldBe "hello"
        cmd.containsKey("helloOk") shouldBe false
        cmd["apiVersion"] shouldBe BsonString("1")
        cmd["apiStrict"] shouldBe BsonBoolean.TRUE
    }

    test("a credential without mechanism asks for saslSupportedMechs, and the authenticator runs after the handshake") {
        val authRan = CopyOnWriteArrayList<Boolean>()
        val cred = MongoCredential(null, "alice", "admin", "pw".toCharArray())
        val (cmd, _) = captureHandshake(ConnectionSettings(credential = cred)) {
            DefaultConnectionFactory(it, authenticator = ConnectionAuthenticator { c, d ->
                authRan.add(d.maxWireVersion == 21 && c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"] != null)
            })
        }
        cmd["saslSupportedMechs"] shouldBe BsonString("admin.alice")
        authRan shouldBe listOf(true)
        // without an explicit authenticator the factory builds the SCRAM one; mechanisms auth.md does not define are rejected
        DefaultConnectionFactory(ConnectionSettings(credential = cred)).close()
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(credential = MongoCredential("MONGODB-CR", "alice", "admin", "pw".toCharArray())))
        }.message!! shouldContain "MONGODB-CR"
    }

    test("the client metadata is truncated to 512 bytes in the spec's order") {
        val info = listOf(DriverInfo("wrapper", "9.9", "x".repeat(600)))
        val (cmd, _) = captureHandshake(ConnectionSettings(appName = "a".repeat(128))) { DefaultConnectionFactory(it, info) }
        val client = cmd.getDocument("client")
        RawBsonDocument(client, BsonDocumentCodec()).byteBuffer.remaining() shouldBeLessThanOrEqual 512
        client.getDocument("application")["name"] shouldBe BsonString("a".repeat(128))
        client.getDocument("driver")["name"] shouldBe BsonString("mooring|wrapper")
        client.getDocument("os").keys shouldBe setOf("type")
        client.containsKey("env") shouldBe false
        client.getString("platform").value shouldStartWith "Java/"
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(ConnectionSettings(appName = "a".repeat(129))) }
    }

    test("the reply is kept: limits, connectionId, helloOk, compressor") {
        withWireServer(ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, compressors = listOf("zlib"))) { server, factory ->
            server.hello = { ctx, req ->
                DefaultHello.standalone(ctx, req).append("maxMessageSizeBytes", BsonInt32(1_000_000))
                    .append("topologyVersion", BsonDocument("processId", BsonObjectId()).append("counter", org.bson.BsonInt64(3)))
                    .append("compression", BsonArray(listOf(BsonString("zlib"))))
            }
            val c = factory.open(server)
            val d = c.description!!
            d.helloOk shouldBe true
            d.maxWireVersion shouldBe 21
            d.maxMessageSizeBytes shouldBe 1_000_000
            d.serverConnectionId shouldBe 1L
            d.compressor shouldBe "zlib"
            d.helloReply.containsKey("topologyVersion") shouldBe true
            server.hello = { ctx, req -> DefaultHello.standalone(ctx, req).apply { remove("helloOk") } }
            factory.open(server, 2).description!!.helloOk shouldBe false
        }
    }

    test("load-balanced: hello with loadBalanced, serviceId required") {
        withWireServer(ConnectionSettings(loadBalanced = true)) { server, factory ->
            val serviceId = ObjectId()
            val seen = CopyOnWriteArrayList<BsonDocument>()
            server.handler = { _, _, cmd -> seen.add(cmd); null }
            val e = shouldThrow<MongoHandshakeException> { factory.create(server.address, 1, 0).establish() }
            e.handshakeCompleted shouldBe false
            seen.first().keys.first() shouldBe "hello"
            seen.first()["loadBalanced"] shouldBe BsonBoolean.TRUE
            server.hello = { ctx, req -> DefaultHello.standalone(ctx, req).append("serviceId", BsonObjectId(serviceId)) }
            factory.open(server, 2).description!!.serviceId shouldBe serviceId
        }
    }

    test("a server whose wire range does not overlap fails with the spec's message; monitors still connect") {
        withWireServer { server, factory ->
            server.hello = { ctx, req -> DefaultHello.standalone(ctx, req).append("maxWireVersion", BsonInt32(6)) }
            val e = shouldThrow<MongoIncompatibleServerException> { factory.create(server.address, 1, 0).establish() }
            e.message shouldBe "Server at ${server.address} reports wire version 6, but this version of Mooring requires at least " +
                "${ClientWireVersion.MIN} (MongoDB ${ClientWireVersion.MIN_MONGODB_VERSION})."
            server.hello = { ctx, req -> DefaultHello.standalone(ctx, req).append("minWireVersion", BsonInt32(99)).append("maxWireVersion", BsonInt32(100)) }
            shouldThrow<MongoIncompatibleServerException> { factory.create(server.address, 2, 0).establish() }.message shouldBe
                "Server at ${server.address} requires wire version 99, but this version of Mooring only supports up to ${ClientWireVersion.MAX}."
            val monitor = factory.createMonitoringConnection(server.address)
            monitor.establish()
            monitor.description!!.maxWireVersion shouldBe 100
            monitor.id shouldBe 0L
        }
    }

    test("a handshake error reply is a command error with handshakeCompleted=false and closes the connection") {
        withWireServer { server, factory ->
            server.configureFailPoint(
                BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['isMaster', 'hello'], errorCode: 91}}"),
            )
            val c = factory.create(server.address, 1, 7)
            val e = shouldThrow<MongoCommandException> { c.establish() }
            e.code shouldBe 91
            e.codeName shouldBe "ShutdownInProgress"
            e.handshakeCompleted shouldBe false
            e.generation shouldBe 7
            c.isClosed shouldBe true
            factory.open(server, 2).isClosed shouldBe false
        }
    }

    test("an authentication failure closes the connection and counts as before the handshake completed") {
        val cred = MongoCredential("SCRAM-SHA-256", "alice", "admin", "pw".toCharArray())
        val factory = DefaultConnectionFactory(ConnectionSettings(credential = cred), authenticator = { c, _ ->
            c.command("admin", BsonDocument("saslStart", BsonInt32(1)))
        })
        val server = WireServer.start()
        try {
            val c = factory.create(server.address, 1, 0)
            val e = shouldThrow<MongoCommandException> { c.establish() }
            e.code shouldBe 59
            e.handshakeCompleted shouldBe false
            c.isClosed shouldBe true
        } finally {
            factory.close()
            server.close()
        }
    }

    test("monitoring connections never send saslSupportedMechs") {
        val cred = MongoCredential(null, "alice", "admin", "pw".toCharArray())
        val factory = DefaultConnectionFactory(ConnectionSettings(credential = cred), authenticator = { _, _ -> })
        val server = WireServer.start()
        try {
            val seen = CopyOnWriteArrayList<BsonDocument>()
            server.handler = { _, _, cmd -> seen.add(cmd); null }
            factory.createMonitoringConnection(server.address).establish()
            seen.single().containsKey("saslSupportedMechs") shouldBe false
        } finally {
            factory.close()
            server.close()
        }
    }
})
