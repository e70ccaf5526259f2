package dev.mooring.sdam.monitor

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.collect
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.time.Duration.Companion.seconds

/**
 * What cancelCheck (and interruptInUseConnections) rely on: closing a connection from another
 * coroutine fails the in-flight command or exhaust read with a [MongoNetworkException], never
 * with a CancellationException that the caller would take for its own cancellation.
 */
class ConcurrentCloseSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    test("close() during a command and during an exhaust read gives MongoNetworkException") {
        val server = WireServer.start()
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000))
        try {
            server.handler = { ctx, _, _ -> if (ctx.commandName == "hello") Reply.Delayed(30_000, Reply.Document(WireServer.ok())) else null }
            for (exhaust in listOf(false, true)) {
                val c = factory.createMonitoringConnection(server.address)
                c.establish()
                val before = server.counters.commandCount("hello")
                coroutineScope {
                    val r = async {
                        runCatching {
                            val cmd = BsonDocument("hello", BsonInt32(1))
                            if (exhaust) c.exhaust("admin", cmd, 0).collect() else c.command("admin", cmd, 0)
                        }
                    }
                    eventually("the hello reached the server") { server.counters.commandCount("hello") > before }
                    c.close()
                    val e = r.await().exceptionOrNull()
                    (e is MongoNetworkException) shouldBe true
                }
                c.isClosed shouldBe true
            }
            shouldThrow<MongoNetworkException> { factory.createMonitoringConnection(server.address).also { it.establish(); it.close() }.command("admin", BsonDocument("ping", BsonInt32(1))) }
        } finally {
            factory.close()
            server.close()
        }
    }
})
