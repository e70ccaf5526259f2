package dev.mooring.integration

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** The test kit's failCommand fail point, driven through the wire and directly. */
class FailPointSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val ping = BsonDocument("ping", BsonInt32(1))
    fun fp(json: String) = BsonDocument.parse("{configureFailPoint: 'failCommand', $json}")

    test("configureFailPoint over the wire: {times: 2} with errorCode and errorLabels, then off") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            c.command("admin", fp("mode: {times: 2}, data: {failCommands: ['ping'], errorCode: 10107, errorLabels: ['RetryableWriteError']}"))
            repeat(2) {
                val e = shouldThrow<MongoCommandException> { c.command("admin", ping) }
                e.code shouldBe 10107
                e.codeName shouldBe "NotWritablePrimary"
                e.errorLabels.contains("RetryableWriteError") shouldBe true
            }
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            c.command("admin", fp("mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}"))
            shouldThrow<MongoCommandException> { c.command("admin", ping) }
            c.command("admin", fp("mode: 'off'"))
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            server.counters.commandCount("configureFailPoint") shouldBe 3
        }
    }

    test("{skip: n} lets n matching commands through first") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.configureFailPoint(fp("mode: {skip: 2}, data: {failCommands: ['ping'], errorCode: 2}"))
            c.command("admin", ping)
            c.command("admin", ping)
            shouldThrow<MongoCommandException> { c.command("admin", ping) }
            shouldThrow<MongoCommandException> { c.command("admin", ping) }
        }
    }

    test("closeConnection closes the socket; the appName filter limits who is hit") {
        val server = WireServer.start()
        val other = DefaultConnectionFactory(ConnectionSettings(appName = "other"))
        val target = DefaultConnectionFactory(ConnectionSettings(appName = "target"))
        try {
            server.configureFailPoint(fp("mode: 'alwaysOn', data: {failCommands: ['ping'], closeConnection: true, appName: 'target'}"))
            val o = other.create(server.address, 1, 0).also { it.establish() }
            o.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            val t = target.create(server.address, 2, 0).also { it.establish() }
            shouldThrow<MongoNetworkException> { t.command("admin", ping) }
            t.isClosed shouldBe true
        } finally {
            other.close()
            target.close()
            server.close()
        }
    }

    test("blockConnection on the handshake with appName runs into connectTimeoutMS") {
        val server = WireServer.start()
        val factory = DefaultConnectionFactory(ConnectionSettings(appName = "slow", connectTimeoutMS = 300))
        try {
            server.configureFailPoint(fp("mode: 'alwaysOn', data: {failCommands: ['isMaster', 'hello'], blockConnection: true, blockTimeMS: 5000, appName: 'slow'}"))
            val e = shouldThrow<MongoNetworkTimeoutException> { factory.create(server.address, 1, 0).establish() }
            e.handshakeCompleted shouldBe false
        } finally {
            factory.close()
            server.close()
        }
    }

    test("blockConnection shorter than the timeout delays, then the command runs normally") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.configureFailPoint(fp("mode: {times: 1}, data: {failCommands: ['ping'], blockConnection: true, blockTimeMS: 50}"))
            c.command("admin", ping)["ok"]!!.asNumber().intValue() shouldBe 1
            server.activeFailPoint!!.exhausted shouldBe true
        }
    }

    test("writeConcernError is added to a successful reply and returned, not thrown") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.configureFailPoint(fp("mode: {times: 1}, data: {failCommands: ['insert'], writeConcernError: {code: 91, errmsg: 'Replication is being shut down'}}"))
            val r = c.command("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("a", BsonInt32(1))))))
            r["ok"]!!.asNumber().intValue() shouldBe 1
            r.getDocument("writeConcernError")["code"] shouldBe BsonInt32(91)
            server.collections.documents("db", "c").size shouldBe 1
        }
    }

    test("invalid fail point documents are rejected with BadValue") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            shouldThrow<MongoCommandException> { c.command("admin", fp("mode: 'sometimes', data: {failCommands: ['ping']}")) }.code shouldBe 2
            shouldThrow<IllegalArgumentException> { server.configureFailPoint(fp("mode: 'alwaysOn', data: {errorCode: 2}")) }
        }
    }
})
