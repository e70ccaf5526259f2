package dev.mooring.cmap.internal.command

import dev.mooring.events.InternalMooringApi
import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.Connection
import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.StructuredLog
import org.bson.BsonDocument
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings
import kotlin.time.Duration.Companion.nanoseconds

/**
 * Not API ([InternalMooringApi], for `sdam`): publishes the command monitoring events of one cluster on its
 * [EventBus] and writes the specification's DEBUG log messages (component `command`:
 * "Command started", "Command succeeded", "Command failed") to SLF4J and to the client's
 * [LoggingSettings.sink], documents cut to its max document length.
 *
 * Zero cost when unobserved: [monitored] returns the connection itself unless a flow collector
 * or a listener wanting command events is registered on the bus ([EventBus.interest]) or the
 * `command` logger has DEBUG enabled. Thread-safe (stateless apart from the
 * bus and the logger).
 */
@InternalMooringApi
public class CommandMonitor(private val bus: EventBus, logging: LoggingSettings = LoggingSettings.DEFAULT) {
    private val log = StructuredLog("command", logging)

    /** Whether anyone wants command events (listeners that declared other event types only do not). */
    private val interest = bus.interest(CommandEvent::class.java)

    /** True when events or log messages would be produced right now. */
    public val isActive: Boolean get() = interest.isActive || log.isDebugEnabled

    /**
     * [connection] wrapped so its commands are monitored as part of [operation] (which ties
     * retries together), or [connection] itself when nobody observes.
     */
    public fun monitored(connection: Connection, operation: MonitoredOperation): Connection =
        if (isActive) MonitoredConnection(connection, this, operation) else connection

    internal fun started(s: StartedCommand) {
        val c = s.connection
        val d = c.description
        val command = if (s.sensitive) BsonDocument() else s.sent
        if (interest.isActive) {
            bus.publish(
                CommandStartedEvent(command, s.database, s.commandName, s.requestId, s.operationId, c.id, d?.serverConnectionId, c.address, d?.serviceId),
            )
        }
        log.debug("Command started") {
            common(s)
            put("command", json(command))
        }
    }

    internal fun succeeded(s: StartedCommand, reply: BsonDocument) {
        val d = s.connection.description
        val duration = (System.nanoTime() - s.startNanos).nanoseconds
        val shown = if (s.sensitive) BsonDocument() else reply
        if (interest.isActive) {
            bus.publish(
                CommandSucceededEvent(
                    shown, duration, s.database, s.commandName, s.requestId, s.operationId,
                    s.connection.id, d?.serverConnectionId, s.connection.address, d?.serviceId,
                ),
            )
        }
        log.debug("Command succeeded") {
            common(s)
            put("durationMS", duration.inWholeNanoseconds / 1_000_000.0)
            put("reply", json(shown))
        }
    }

    internal fun failed(s: StartedCommand, error: Throwable) {
        val d = s.connection.description
        val duration = (System.nanoTime() - s.startNanos).nanoseconds
        val failure = if (s.sensitive) CommandRedaction.redactFailure(error) else error
        if (interest.isActive) {
            bus.publish(
                CommandFailedEvent(
                    failure, duration, s.database, s.commandName, s.requestId, s.operationId,
                    s.connection.id, d?.serverConnectionId, s.connection.address, d?.serviceId,
                ),
            )
        }
        log.debug("Command failed") {
            common(s)
            put("durationMS", duration.inWholeNanoseconds / 1_000_000.0)
            put("failure", failure.toString())
        }
    }

    private fun MutableMap<String, Any?>.common(s: StartedCommand) {
        val c = s.connection
        val d = c.description
        put("commandName", s.commandName)
        put("databaseName", s.database)
        put("requestId", s.requestId)
        put("operationId", s.operationId)
        put("driverConnectionId", c.id)
        put("serverConnectionId", d?.serverConnectionId)
        put("serverHost", c.address.host)
        if (!c.address.isUnixSocket) put("serverPort", c.address.port)
        put("serviceId", d?.serviceId?.toHexString())
    }

    private fun json(doc: BsonDocument): String = log.document(doc.toJson(JSON))

    private companion object {
        val JSON: JsonWriterSettings = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build()
    }
}

/**
 * Not API ([InternalMooringApi], for `sdam`): one operation as command monitoring sees it; its [operationId] is
 * the request id of its first monitored command. Thread-safe.
 */
@InternalMooringApi
public class MonitoredOperation {
    @Volatile private var id: Long? = null

    /** The operation id, fixed by the first command of the operation (null before it). */
    internal val operationId: Long? get() = id

    internal fun idFor(requestId: Int): Long = synchronized(this) { id ?: requestId.toLong().also { id = it } }
}

/** One command between its started event and its outcome. */
internal class StartedCommand(
    val connection: Connection,
    val database: String,
    val commandName: String,
    val requestId: Int,
    val operationId: Long,
    val sent: BsonDocument,
    val sensitive: Boolean,
    val startNanos: Long,
)
