package dev.mooring.cmap.internal.command

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoMessageEncodingException
import dev.mooring.cmap.internal.wire.RequestIds
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * A [Connection] whose [command]s are reported to a [CommandMonitor]. Mooring's own connections
 * report the request id and the document as sent through [CommandRequestObserver] just before
 * writing, so the started event goes out at that moment; for a connection that does not report
 * (a custom [dev.mooring.cmap.ConnectionFactory]), the started event is published when the
 * outcome is known, with a request id of its own and the command plus `$db`. A command that
 * was never sent (too large to encode) publishes nothing.
 *
 * Same concurrency contract as the wrapped connection (single-track, cancellation closes it).
 */
internal class MonitoredConnection(
    private val delegate: Connection,
    private val monitor: CommandMonitor,
    private val operation: MonitoredOperation,
) : Connection {
    override val address: ServerAddress get() = delegate.address
    override val id: Long get() = delegate.id
    override val generation: Int get() = delegate.generation
    override val description: ConnectionDescription? get() = delegate.description
    override val isClosed: Boolean get() = delegate.isClosed

    override suspend fun command(database: String, command: BsonDocument): BsonDocument {
        val name = command.keys.firstOrNull() ?: ""
        val sensitive = CommandRedaction.isSensitive(name, command)
        val calledNanos = System.nanoTime()
        var started: StartedCommand? = null
        val observer = CommandRequestObserver { requestId, sent ->
            started = StartedCommand(delegate, database, name, requestId, operation.idFor(requestId), sent, sensitive, System.nanoTime())
                .also { monitor.started(it) }
        }
        val reply = try {
            if (delegate is ObservedCommand) delegate.command(database, command, observer) else delegate.command(database, command)
        } catch (e: Throwable) {
            if (started == null && e is MongoMessageEncodingException) throw e
            monitor.failed(started ?: unreported(database, name, command, sensitive, calledNanos), e)
            throw e
        }
        monitor.succeeded(started ?: unreported(database, name, command, sensitive, calledNanos), reply)
        return reply
    }

    /** The started event for a connection that did not report its request: published now. */
    private fun unreported(database: String, name: String, command: BsonDocument, sensitive: Boolean, calledNanos: Long): StartedCommand {
        val requestId = RequestIds.next()
        val sent = command.clone().append("\$db", BsonString(database))
        return StartedCommand(delegate, database, name, requestId, operation.idFor(requestId), sent, sensitive, calledNanos)
            .also { monitor.started(it) }
    }

    override fun close() = delegate.close()

    override fun toString(): String = "Monitored($delegate)"
}
