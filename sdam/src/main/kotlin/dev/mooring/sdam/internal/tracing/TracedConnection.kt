package dev.mooring.sdam.internal.tracing

import dev.mooring.cmap.Connection
import dev.mooring.cmap.internal.command.CommandRedaction
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument

/**
 * A [Connection] whose every [command] is a command span under the current operation span
 * (each retry runs on its own connection checkout, hence its own span). Sensitive commands
 * (command logging and monitoring's list) get no span, and their failures are recorded redacted
 * on the operation span. Same concurrency contract as the
 * wrapped connection.
 */
internal class TracedConnection(private val delegate: Connection, private val tracer: OpenTelemetryTracer) : Connection by delegate {
    override suspend fun command(database: String, command: BsonDocument): BsonDocument {
        val name = command.keys.firstOrNull() ?: ""
        if (CommandRedaction.isSensitive(name, command)) {
            try {
                return delegate.command(database, command)
            } catch (e: Throwable) {
                if (e !is CancellationException) tracer.currentOperation()?.sensitiveFailure = e
                throw e
            }
        }
        val span = tracer.commandSpan(delegate, database, name, command)
        try {
            val reply = delegate.command(database, command)
            // the cursor the command used, else the one it opened: on the command span and on its operation's
            val cursorId = CommandAttributes.cursorId(command) ?: CommandAttributes.replyCursorId(reply)
            if (cursorId != null) {
                span.setAttribute("db.mongodb.cursor_id", cursorId)
                tracer.currentOperation()?.span?.setAttribute("db.mongodb.cursor_id", cursorId)
            }
            if (reply.getNumber("ok", null)?.doubleValue() == 0.0) {
                reply.getNumber("code", null)?.let {
                    span.setAttribute("db.response.status_code", it.intValue().toString())
                    span.setAttribute("error.type", it.intValue().toString())
                }
            }
            return reply
        } catch (e: Throwable) {
            if (e !is CancellationException) tracer.recordError(span, e, commandSpan = true)
            throw e
        } finally {
            span.end()
            tracer.currentOperation()?.selectionStartNanos = System.nanoTime() // a retry selects again from here
        }
    }
}
