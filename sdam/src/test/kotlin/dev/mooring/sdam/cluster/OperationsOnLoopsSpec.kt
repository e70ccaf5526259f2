package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.ConcurrentHashMap

/**
 * An operation called from another dispatcher while other operations hold connections runs on the
 * cluster's event loops (OperationRunner.onLoops) and comes back to its caller's dispatcher; a lone
 * operation, and a block of the caller's own (withConnection), stay on the caller's thread.
 */
class OperationsOnLoopsSpec : FunSpec({
    /** The thread each command (by its `comment`) was sent from: the command's started event is published there. */
    class SentFrom : EventListener {
        val threads = ConcurrentHashMap<String, String>()
        override val eventTypes = setOf(CommandStartedEvent::class.java)
        override fun onEvent(event: MooringEvent) {
            val e = event as CommandStartedEvent
            e.command["comment"]?.let { threads[it.asString().value] = Thread.currentThread().name }
        }
    }

    fun ping(comment: String) = BsonDocument("ping", BsonInt32(1)).append("comment", BsonString(comment))

    suspend fun awaitUntil(cond: () -> Boolean) = withTimeout(20_000) { while (!cond()) delay(5) }

    test("busy: a runCommand from Dispatchers.Default is sent from an event loop and returns on the caller's dispatcher; alone it stays on the caller's thread") {
        val server = WireServer.start()
        val sentFrom = SentFrom()
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?maxPoolSize=2"), listOf(sentFrom))
        try {
            withContext(Dispatchers.Default) {
                cluster.runCommand("admin", ping("alone"))
                sentFrom.threads["alone"]!! shouldStartWith "DefaultDispatcher-worker"

                val release = CompletableDeferred<Unit>()
                coroutineScope {
                    val holder = async {
                        cluster.withConnection { c ->
                            c.command("admin", ping("holder"))
                            release.await()
                        }
                    }
                    awaitUntil { sentFrom.threads.containsKey("holder") }
                    cluster.runCommand("admin", ping("busy"))["ok"]!!.asNumber().intValue() shouldBe 1
                    Thread.currentThread().name shouldStartWith "DefaultDispatcher-worker"
                    release.complete(Unit)
                    holder.await()
                }
                sentFrom.threads["busy"]!! shouldStartWith "mooring-loop-"
                // the block of withConnection is the caller's code: it never runs on a loop
                sentFrom.threads["holder"]!! shouldStartWith "DefaultDispatcher-worker"
            }
        } finally {
            cluster.closeSuspending()
            server.close()
        }
    }

    test("busy: a caller cancelled while its operation waits on the loops for a connection gets its cancellation, and the pool is left whole") {
        val server = WireServer.start()
        val cluster = MongoCluster("mongodb://${server.address}/?maxPoolSize=1")
        try {
            withContext(Dispatchers.Default) {
                val release = CompletableDeferred<Unit>()
                coroutineScope {
                    val holder = async { cluster.withConnection { release.await() } }
                    awaitUntil { cluster.poolStatistics().values.singleOrNull()?.inUseConnections == 1 } // the pool exists once the server is discovered
                    val waiting = async { cluster.runCommand("admin", ping("waits")) }
                    awaitUntil { cluster.poolStatistics().values.singleOrNull()?.waitQueueSize == 1 }
                    waiting.cancel()
                    shouldThrow<CancellationException> { waiting.await() }
                    awaitUntil { cluster.poolStatistics().values.singleOrNull()?.waitQueueSize == 0 }
                    release.complete(Unit)
                    holder.await()
                }
                cluster.runCommand("admin", ping("after"))["ok"]!!.asNumber().intValue() shouldBe 1
                val stats = cluster.poolStatistics().values.single()
                stats.inUseConnections shouldBe 0
                stats.totalConnections shouldBe 1
            }
        } finally {
            cluster.closeSuspending()
            server.close()
        }
    }
})
