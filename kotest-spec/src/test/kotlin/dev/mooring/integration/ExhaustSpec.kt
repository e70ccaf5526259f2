package dev.mooring.integration

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.time.Duration.Companion.seconds

/** The exhaust API the streaming monitor will use, against scripted moreToCome replies. */
class ExhaustSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val hello = BsonDocument("hello", BsonInt32(1)).append("maxAwaitTimeMS", BsonInt32(500))
    fun reply(n: Int) = BsonDocument("n", BsonInt32(n)).append("ok", BsonInt32(1))

    test("replies stream until one arrives without moreToCome; then the connection is usable again") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "hello" && ctx.exhaustAllowed) {
                    Reply.Exhaust(flow { for (i in 1..3) emit(Reply.Streamed(reply(i), moreToCome = i < 3)) })
                } else null
            }
            c.exhaust("admin", hello, readTimeoutMS = 10_000).map { it.getInt32("n").value }.toList() shouldBe listOf(1, 2, 3)
            c.isClosed shouldBe false
            c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1
        }
    }

    test("while a stream is open, other commands fail loudly; stopping early closes the connection") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            val release = CompletableDeferred<Unit>()
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "hello") {
                    Reply.Exhaust(flow { emit(Reply.Streamed(reply(1))); release.await(); emit(Reply.Streamed(reply(2))) })
                } else null
            }
            coroutineScope {
                val first = CompletableDeferred<Unit>()
                val collected = async {
                    c.exhaust("admin", hello, 10_000).take(2).map { first.complete(Unit); it.getInt32("n").value }.toList()
                }
                first.await()
                shouldThrow<IllegalStateException> { c.command("admin", BsonDocument("ping", BsonInt32(1))) }
                release.complete(Unit)
                collected.await() shouldBe listOf(1, 2)
            }
            // two replies taken, the server still had more to come: wire state unknown, so closed
            c.isClosed shouldBe true
        }
    }

    test("each wait is bounded by readTimeoutMS") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "hello") {
                    Reply.Exhaust(flow { emit(Reply.Streamed(reply(1))); kotlinx.coroutines.awaitCancellation() })
                } else null
            }
            val got = mutableListOf<Int>()
            val e = shouldThrow<MongoNetworkTimeoutException> {
                c.exhaust("admin", hello, readTimeoutMS = 300).collect { got.add(it.getInt32("n").value) }
            }
            e.message shouldContain "exhaust"
            got shouldBe listOf(1)
            c.isClosed shouldBe true
        }
    }

    test("an error reply ends the stream with a command error and keeps the connection") {
        withWireServer { server, factory ->
            val c = factory.open(server)
            server.handler = { ctx, _, _ ->
                if (ctx.commandName == "hello") {
                    val err = BsonDocument("ok", BsonInt32(0)).append("code", BsonInt32(91)).append("errmsg", org.bson.BsonString("shutting down"))
                    Reply.Exhaust(flow { emit(Reply.Streamed(reply(1))); emit(Reply.Streamed(err, moreToCome = false)) })
                } else null
            }
            val got = mutableListOf<Int>()
            shouldThrow<MongoCommandException> { c.exhaust("admin", hello, 10_000).collect { got.add(it.getInt32("n").value) } }.code shouldBe 91
            got shouldBe listOf(1)
            c.isClosed shouldBe false
            c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1
        }
    }
})
