package dev.mooring.cmap.command

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoMessageEncodingException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.internal.command.CommandMonitor
import dev.mooring.cmap.internal.command.CommandRedaction
import dev.mooring.cmap.internal.command.CommandRequestObserver
import dev.mooring.cmap.internal.command.ObservedCommand
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.events.EventBus
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.types.ObjectId

/** Command monitoring around one connection: redaction, event order and fields, connections that report or not. */
class CommandMonitorSpec : FunSpec({
    val address = ServerAddress("db.example", 27018)
    val serviceId = ObjectId()

    /** A connection that answers with [answer]; when [reports], it tells the observer request id 42 first, as Mooring's own connections do. */
    class Scripted(val reports: Boolean, val answer: (BsonDocument) -> BsonDocument) : Connection, ObservedCommand {
        override val address = ServerAddress("db.example", 27018)
        override val id = 7L
        override val generation = 0
        override var description: ConnectionDescription? = null
        override val isClosed = false
        override suspend fun command(database: String, command: BsonDocument): BsonDocument =
            answer(command.clone().append("\$db", BsonString(database)))
        override suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument {
            val sent = command.clone().append("\$db", BsonString(database))
            if (reports) observer.sending(42, sent)
            return answer(sent)
        }
        override fun close() {}
    }

    fun describe(c: Scripted) {
        c.description = ConnectionDescription(address, BsonDocument(), 0, 21, 1, 1, 1, serverConnectionId = 99, serviceId = serviceId, helloOk = true, compressor = null)
    }

    fun recorder(): Pair<EventBus, MutableList<MooringEvent>> {
        val bus = EventBus()
        val events = ArrayList<MooringEvent>()
        bus.addListener { synchronized(events) { events.add(it) } }
        return bus to events
    }

    test("sensitive commands: the list, case-insensitive, and hello only with speculativeAuthenticate") {
        for (name in listOf("authenticate", "saslStart", "saslContinue", "getnonce", "createUser", "updateUser", "copydbgetnonce", "copydbsaslstart", "copydb", "SASLSTART")) {
            CommandRedaction.isSensitive(name, BsonDocument(name, BsonString("x"))) shouldBe true
        }
        CommandRedaction.isSensitive("hello", BsonDocument.parse("{hello: 1}")) shouldBe false
        CommandRedaction.isSensitive("hello", BsonDocument.parse("{hello: 1, speculativeAuthenticate: {}}")) shouldBe true
        CommandRedaction.isSensitive("isMaster", BsonDocument.parse("{isMaster: 1, speculativeAuthenticate: {}}")) shouldBe true
        CommandRedaction.isSensitive("ping", BsonDocument.parse("{ping: 1}")) shouldBe false
    }

    test("a succeeded command: started with the command as sent, then succeeded with the reply, same ids") {
        val (bus, events) = recorder()
        val monitor = CommandMonitor(bus)
        val c = Scripted(reports = true) { BsonDocument.parse("{ok: 1, n: 3}") }
        describe(c)
        val op = MonitoredOperation()
        monitor.monitored(c, op).command("app", BsonDocument.parse("{count: 'c'}"))
        events.size shouldBe 2
        val started = events[0].shouldBeInstanceOf<CommandStartedEvent>()
        started.command shouldBe BsonDocument.parse("{count: 'c', \$db: 'app'}")
        started.commandName shouldBe "count"
        started.databaseName shouldBe "app"
        started.requestId shouldBe 42
        started.operationId shouldBe 42L
        started.connectionId shouldBe 7L
        started.serverConnectionId shouldBe 99L
        started.serviceId shouldBe serviceId
        started.address shouldBe address
        val succeeded = events[1].shouldBeInstanceOf<CommandSucceededEvent>()
        succeeded.reply shouldBe BsonDocument.parse("{ok: 1, n: 3}")
        succeeded.requestId shouldBe 42
        succeeded.operationId shouldBe 42L
        succeeded.duration.isNegative() shouldBe false
    }

    test("a failed command publishes started then failed with the error the caller sees") {
        val (bus, events) = recorder()
        val error = MongoNetworkException("reset", address)
        val c = Scripted(reports = true) { throw error }
        shouldThrow<MongoNetworkException> { CommandMonitor(bus).monitored(c, MonitoredOperation()).command("app", BsonDocument.parse("{ping: 1}")) }
        events.map { it::class } shouldBe listOf(CommandStartedEvent::class, CommandFailedEvent::class)
        (events[1] as CommandFailedEvent).failure shouldBeSameInstanceAs error
        (events[1] as CommandFailedEvent).serverConnectionId shouldBe null
    }

    test("sensitive commands are published with empty documents and a redacted failure") {
        val (bus, events) = recorder()
        val monitor = CommandMonitor(bus)
        val ok = Scripted(reports = true) { BsonDocument.parse("{ok: 1, conversationId: 1, payload: 'secret'}") }
        monitor.monitored(ok, MonitoredOperation()).command("admin", BsonDocument.parse("{saslStart: 1, payload: 'secret'}"))
        (events[0] as CommandStartedEvent).command shouldBe BsonDocument()
        (events[1] as CommandSucceededEvent).reply shouldBe BsonDocument()
        events.clear()
        val failing = Scripted(reports = true) { throw MongoCommandException(BsonDocument.parse("{ok: 0, code: 18, codeName: 'AuthenticationFailed', errmsg: 'secret detail'}"), address) }
        shouldThrow<MongoCommandException> { monitor.monitored(failing, MonitoredOperation()).command("admin", BsonDocument.parse("{saslContinue: 1}")) }
        val failure = (events[1] as CommandFailedEvent).failure.shouldBeInstanceOf<MongoCommandException>()
        failure.code shouldBe 18
        failure.response.containsKey("errmsg") shouldBe false
    }

    test("one operation's commands share the operation id of its first request") {
        val (bus, events) = recorder()
        val monitor = CommandMonitor(bus)
        var next = 100
        val c = object : Connection by Scripted(false, { BsonDocument.parse("{ok: 1}") }), ObservedCommand {
            override suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument {
                observer.sending(next++, command)
                return BsonDocument.parse("{ok: 1}")
            }
        }
        val op = MonitoredOperation()
        monitor.monitored(c, op).command("a", BsonDocument.parse("{ping: 1}"))
        monitor.monitored(c, op).command("a", BsonDocument.parse("{ping: 1}"))
        events.filterIsInstance<CommandStartedEvent>().map { it.requestId to it.operationId } shouldBe listOf(100 to 100L, 101 to 100L)
    }

    test("a connection that does not report its requests still gets both events; a command never sent gets none") {
        val (bus, events) = recorder()
        val monitor = CommandMonitor(bus)
        monitor.monitored(Scripted(reports = false) { BsonDocument.parse("{ok: 1}") }, MonitoredOperation()).command("a", BsonDocument.parse("{ping: 1}"))
        events.map { it::class } shouldBe listOf(CommandStartedEvent::class, CommandSucceededEvent::class)
        (events[0] as CommandStartedEvent).command shouldBe BsonDocument.parse("{ping: 1, \$db: 'a'}")
        events.clear()
        val tooBig = Scripted(reports = false) { throw MongoMessageEncodingException("too large") }
        shouldThrow<MongoMessageEncodingException> { monitor.monitored(tooBig, MonitoredOperation()).command("a", BsonDocument.parse("{insert: 'c'}")) }
        events shouldBe emptyList()
    }

    test("nobody observing: the connection is not wrapped") {
        val c = Scripted(reports = true) { BsonDocument.parse("{ok: 1}") }
        CommandMonitor(EventBus()).monitored(c, MonitoredOperation()) shouldBeSameInstanceAs c
    }
})
