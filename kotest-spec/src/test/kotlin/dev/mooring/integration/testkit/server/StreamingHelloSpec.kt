package dev.mooring.integration.testkit.server

import dev.mooring.testkit.server.StreamingHello
import dev.mooring.testkit.server.WireServer
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.cmap.MongoCommandException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64

/** The test kit's streaming hello protocol ([StreamingHello]) as a 4.4+ mongod answers it. */
class StreamingHelloSpec : FunSpec({
    suspend fun <T> withConnection(server: WireServer, block: suspend (ExhaustConnection) -> T): T {
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000))
        val c = factory.createMonitoringConnection(server.address)
        try {
            c.establish()
            return block(c)
        } finally {
            c.close()
            factory.close()
        }
    }

    fun hello(tv: BsonDocument?, maxAwait: Int?) = BsonDocument("hello", BsonInt32(1)).also { d ->
        tv?.let { d["topologyVersion"] = it }
        maxAwait?.let { d["maxAwaitTimeMS"] = BsonInt32(it) }
    }

    test("a plain hello carries the topologyVersion; without streaming there is none") {
        WireServer.start().use { plain ->
            withConnection(plain) { c -> c.description!!.helloReply["topologyVersion"] shouldBe null }
        }
        WireServer.start().use { server ->
            val s = StreamingHello().also { server.streaming = it }
            withConnection(server) { c ->
                c.description!!.helloReply.getDocument("topologyVersion") shouldBe s.topologyVersion.value.toBson()
            }
        }
    }

    test("awaitable hello: errors for a missing half or a counter from the future; an answer after maxAwaitTimeMS or at a change") {
        WireServer.start().use { server ->
            val s = StreamingHello().also { server.streaming = it }
            withConnection(server) { c ->
                val tv = s.topologyVersion.value.toBson()
                shouldThrow<MongoCommandException> { c.command("admin", hello(null, 10), 5_000) }.code shouldBe 31368
                shouldThrow<MongoCommandException> { c.command("admin", hello(tv, null), 5_000) }.code shouldBe 31372
                val future = tv.clone().append("counter", BsonInt64(5))
                shouldThrow<MongoCommandException> { c.command("admin", hello(future, 10), 5_000) }.code shouldBe 31382
                c.command("admin", hello(tv, 50), 5_000).getDocument("topologyVersion") shouldBe tv
                s.changeTopology()
                c.command("admin", hello(tv, 60_000), 5_000).getDocument("topologyVersion") shouldNotBe tv
            }
        }
    }
})
