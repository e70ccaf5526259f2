package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.LogComponent
import dev.mooring.events.LogLevel
import dev.mooring.events.LogMessage
import dev.mooring.events.LogSink
import dev.mooring.events.LoggingSettings
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ReadPreference
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import java.util.Collections
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.seconds

/**
 * timeoutMS per call and per cluster (client-side-operations-timeout.md), unacknowledged writes
 * (moreToCome, `{ok: 1}`), and command log messages through the client's log sink, against the
 * test kit's wire server.
 */
class OperationTimeoutSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun cluster(server: WireServer, query: String = "", logging: LoggingSettings? = null): MongoCluster {
        var settings = MongoClusterSettings.fromUri("mongodb://${server.address}/?serverSelectionTimeoutMS=10000$query")
        if (logging != null) settings = settings.copy(logging = logging)
        return MongoCluster(settings)
    }

    /** Records every command the server receives. */
    fun recording(server: WireServer): MutableList<BsonDocument> {
        val seen = CopyOnWriteArrayList<BsonDocument>()
        server.handler = { ctx, _, cmd -> if (ctx.commandName != "hello" && ctx.commandName != "isMaster") seen += cmd; null }
        return seen
    }

    test("a per-call timeoutMS sends maxTimeMS below it; the cluster's applies when the call gives none; 0 and unset send none") {
        WireServer.start().use { server ->
            val seen = recording(server)
            val c = cluster(server, "&timeoutMS=30000")
            try {
                c.runCommand("db", BsonDocument.parse("{ping: 1}"), ReadPreference.PRIMARY, timeoutMS = 5_000)
                c.runRetryableRead("db", BsonDocument.parse("{find: 'c', filter: {}}"))
                c.runCommand("db", BsonDocument.parse("{ping: 1}"), timeoutMS = 0)
                val (perCall, clusterWide, infinite) = seen.toList()
                perCall.getNumber("maxTimeMS").longValue() shouldBeLessThanOrEqual 5_000L
                clusterWide.getNumber("maxTimeMS").longValue() shouldBeGreaterThan 5_000L
                infinite.containsKey("maxTimeMS") shouldBe false
                shouldThrow<IllegalArgumentException> { c.runCommand("db", BsonDocument.parse("{ping: 1}"), timeoutMS = -1) }
            } finally {
                c.closeSuspending()
            }
            val legacy = cluster(server)
            try {
                legacy.runCommand("db", BsonDocument.parse("{ping: 1}"))
                seen.last().containsKey("maxTimeMS") shouldBe false
            } finally {
                legacy.closeSuspending()
            }
        }
    }

    test("MaxTimeMSExpired is a MongoOperationTimeoutException wrapping the server's error only when timeoutMS is set") {
        WireServer.start().use { server ->
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Document(WireServer.error(50, "MaxTimeMSExpired", "operation exceeded time limit")) else null }
            val c = cluster(server)
            try {
                val e = shouldThrow<MongoOperationTimeoutException> { c.runCommand("db", BsonDocument.parse("{ping: 1}"), timeoutMS = 10_000) }
                e.cause.shouldBeInstanceOf<MongoCommandException>().code shouldBe 50
                shouldThrow<MongoCommandException> { c.runCommand("db", BsonDocument.parse("{ping: 1}")) }
            } finally {
                c.closeSuspending()
            }
        }
    }

    test("with timeoutMS set, a retryable read is retried until it succeeds, more than once") {
        WireServer.start().use { server ->
            server.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 3}, data: {failCommands: ['find'], errorCode: 89}}"))
            val c = cluster(server)
            try {
                c.runRetryableRead("db", BsonDocument.parse("{find: 'c', filter: {}}"), timeoutMS = 0).getDocument("cursor")
                server.counters.commandCount("find") shouldBe 4
                server.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 3}, data: {failCommands: ['find'], errorCode: 89}}"))
                // without timeoutMS: one retry only
                shouldThrow<MongoCommandException> { c.runRetryableRead("db", BsonDocument.parse("{find: 'c', filter: {}}")) }
                server.counters.commandCount("find") shouldBe 6
            } finally {
                c.closeSuspending()
            }
        }
    }

    test("an operation whose deadline passes while the server holds the reply fails with a timeout error") {
        WireServer.start().use { server ->
            server.handler = { ctx, _, _ -> if (ctx.commandName == "ping") Reply.Delayed(5_000, Reply.Document(WireServer.ok())) else null }
            val c = cluster(server)
            try {
                c.runCommand("admin", BsonDocument.parse("{hello: 1}")) // connected and selectable first
                shouldThrow<MongoOperationTimeoutException> { c.runCommand("db", BsonDocument.parse("{ping: 1}"), timeoutMS = 300) }
            } finally {
                c.closeSuspending()
            }
        }
    }

    test("an unacknowledged write goes with moreToCome and reports {ok: 1}; the connection stays usable") {
        WireServer.start().use { server ->
            val c = cluster(server)
            try {
                val reply = c.runRetryableWrite("db", BsonDocument.parse("{insert: 'c', documents: [{_id: 1}], writeConcern: {w: 0}}"))
                reply shouldBe BsonDocument.parse("{ok: 1}")
                withTimeout(10.seconds) { while (server.collections.documents("db", "c").isEmpty()) delay(10) }
                c.runCommand("db", BsonDocument.parse("{find: 'c', filter: {}}")).getDocument("cursor").getArray("firstBatch").size shouldBe 1
                server.counters.connectionsOpened shouldBe server.counters.currentlyOpen
            } finally {
                c.closeSuspending()
            }
        }
    }

    test("command log messages reach the client's log sink, with the sink's max document length") {
        WireServer.start().use { server ->
            val messages = Collections.synchronizedList(ArrayList<LogMessage>())
            val logging = LoggingSettings(sink = LogSink { messages += it }, componentLevels = mapOf(LogComponent.COMMAND to LogLevel.DEBUG), maxDocumentLength = 10)
            val c = cluster(server, logging = logging)
            try {
                c.runCommand("db", BsonDocument.parse("{ping: 1, comment: 'a long comment'}"))
                val started = messages.single { it.message == "Command started" }
                (started.data["command"] as String).endsWith("...") shouldBe true
                messages.single { it.message == "Command succeeded" }.data["commandName"] shouldBe "ping"
            } finally {
                c.closeSuspending()
            }
        }
    }
})
