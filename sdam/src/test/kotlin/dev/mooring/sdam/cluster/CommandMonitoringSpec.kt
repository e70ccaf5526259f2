package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonString

/** Command monitoring through MongoCluster against the test kit's server: which commands, in which order, with which fields. */
class CommandMonitoringSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    suspend fun <T> withCluster(options: String = "", block: suspend (MongoCluster, WireServer, EventRecorder) -> T): T {
        val server = WireServer.start()
        val recorder = EventRecorder()
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?serverSelectionTimeoutMS=5000$options"), listOf(recorder))
        try {
            return block(cluster, server, recorder)
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    fun EventRecorder.commands(): List<CommandEvent> = ofType()

    test("runCommand publishes started then succeeded, with the command as sent and the connection's ids") {
        withCluster { cluster, _, recorder ->
            cluster.runCommand("app", BsonDocument.parse("{find: 'c', filter: {}}"))
            val (started, succeeded) = recorder.commands()
            started.shouldBeInstanceOf<CommandStartedEvent>()
            started.command["find"] shouldBe BsonString("c")
            started.command["\$db"] shouldBe BsonString("app")
            started.commandName shouldBe "find"
            started.databaseName shouldBe "app"
            started.operationId shouldBe started.requestId.toLong()
            started.connectionId shouldBe recorder.ofType<ConnectionCheckedOutEvent>().last().connectionId
            started.serverConnectionId shouldNotBe null // the test kit reports connectionId in hello
            started.serviceId shouldBe null
            started.address shouldBe cluster.settings.hosts.single()
            succeeded.shouldBeInstanceOf<CommandSucceededEvent>()
            succeeded.requestId shouldBe started.requestId
            succeeded.reply.getDocument("cursor").getArray("firstBatch").size shouldBe 0
            succeeded.duration.isNegative() shouldBe false
        }
    }

    test("monitors, the handshake and setup commands publish no command events; heartbeats still happen") {
        withCluster("&heartbeatFrequencyMS=500") { cluster, server, recorder ->
            cluster.runCommand("admin", ping())
            cluster.awaitTopology { true }
            withTimeout(20.seconds) { while (server.counters.commandCount("hello") + server.counters.commandCount("isMaster") < 3) kotlinx.coroutines.delay(20) }
            recorder.commands().map { it.commandName } shouldBe listOf("ping", "ping")
        }
    }

    test("an ok: 0 reply and a network error publish failed events carrying the caller's error") {
        withCluster { cluster, server, recorder ->
            server.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['ping'], errorCode: 2}}"))
            val commandError = shouldThrow<MongoCommandException> { cluster.runCommand("admin", ping()) }
            server.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['ping'], closeConnection: true}}"))
            val networkError = shouldThrow<MongoNetworkException> { cluster.runCommand("admin", ping()) }
            val events = recorder.commands()
            events.map { it::class } shouldBe listOf(CommandStartedEvent::class, CommandFailedEvent::class, CommandStartedEvent::class, CommandFailedEvent::class)
            (events[1] as CommandFailedEvent).failure shouldBe commandError
            (events[3] as CommandFailedEvent).failure shouldBe networkError
        }
    }

    test("a retried read publishes both attempts under one operation id") {
        withCluster { cluster, server, recorder ->
            cluster.runCommand("admin", ping())
            recorder.clear()
            server.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], closeConnection: true}}"))
            cluster.runRetryableRead("app", BsonDocument.parse("{find: 'c', filter: {}}"))
            val events = recorder.commands()
            events.map { it::class } shouldBe listOf(CommandStartedEvent::class, CommandFailedEvent::class, CommandStartedEvent::class, CommandSucceededEvent::class)
            events.map { it.operationId }.distinct() shouldBe listOf(events[0].requestId.toLong())
            events[2].requestId shouldNotBe events[0].requestId
        }
    }

    test("sensitive commands are published redacted; a plain hello is not") {
        withCluster { cluster, _, recorder ->
            shouldThrow<MongoCommandException> { cluster.runCommand("admin", BsonDocument.parse("{saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: 'secret'}")) }
            cluster.runCommand("admin", BsonDocument.parse("{hello: 1, speculativeAuthenticate: {saslStart: 1}}"))
            cluster.runCommand("admin", BsonDocument.parse("{hello: 1}"))
            val events = recorder.commands()
            (events[0] as CommandStartedEvent).command shouldBe BsonDocument()
            val failure = (events[1] as CommandFailedEvent).failure.shouldBeInstanceOf<MongoCommandException>()
            failure.code shouldBe 59
            failure.response.containsKey("errmsg") shouldBe false
            (events[2] as CommandStartedEvent).command shouldBe BsonDocument()
            (events[3] as CommandSucceededEvent).reply shouldBe BsonDocument()
            (events[4] as CommandStartedEvent).command["hello"] shouldNotBe null
            (events[5] as CommandSucceededEvent).reply.containsKey("isWritablePrimary") shouldBe true
        }
    }

    test("withConnection's commands are monitored, and commandEvents is the typed view") {
        withCluster { cluster, _, _ ->
            coroutineScope {
                val seen = async(start = CoroutineStart.UNDISPATCHED) { cluster.commandEvents.take(4).toList() }
                cluster.withConnection { c ->
                    c.command("admin", ping())
                    c.command("admin", BsonDocument.parse("{buildInfo: 1}"))
                }
                withTimeout(20.seconds) { seen.await() }.map { it.commandName } shouldBe listOf("ping", "ping", "buildInfo", "buildInfo")
            }
        }
    }
})
