package dev.mooring.bench

import dev.mooring.bench.server.PingResponder
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.bson.BsonDocument
import org.bson.BsonInt32

/** The responder speaks enough of the protocol for a real handshake, ping, and a clear error otherwise. */
class PingResponderSpec : FunSpec({
    test("handshake, ping and an unsupported command against the responder") {
        val responder = PingResponder.bind()
        val thread = Thread(responder::run, "responder-test").apply { isDaemon = true; start() }
        DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000)).use { factory ->
            val c = factory.create(ServerAddress("127.0.0.1", responder.port), 1, 0)
            try {
                c.establish()
                c.description shouldNotBe null
                c.description!!.maxWireVersion shouldBe 21
                repeat(100) { c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1 }
                val e = runCatching { c.command("admin", BsonDocument("find", BsonInt32(1))) }
                val reply = e.getOrNull()
                if (reply != null) reply["ok"]!!.asNumber().intValue() shouldBe 0 else (e.exceptionOrNull() is MongoCommandException) shouldBe true
            } finally {
                c.close()
            }
        }
        responder.close()
        thread.join(5_000)
        thread.isAlive shouldBe false
        shouldThrow<java.io.IOException> { java.net.Socket("127.0.0.1", responder.port).close() }
    }
})
