package dev.mooring.cmap.internal.auth

import dev.mooring.events.InternalMooringApi
import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.internal.connection.SocketConnection
import dev.mooring.cmap.internal.pool.PooledConnection
import kotlinx.coroutines.withContext
import org.bson.BsonDocument

/**
 * auth.md "Reauthentication", for the operation layer (not API: public only so `sdam` can call it,
 * [InternalMooringApi]): [wrap] gives a connection whose commands, on a ReauthenticationRequired (391)
 * error, reauthenticate the connection once (SASL only, no hello, no speculative
 * authentication) and run again, whether or not the command is retryable. The 391 failure and
 * the second attempt are both seen by [wrap]'s `view` (so command monitoring shows both). Only
 * mechanisms that support it (MONGODB-OIDC) are wrapped; for others [wrap] returns the view.
 * Reauthentication is not an establishment: connectTimeoutMS does not apply, its round trips
 * have socketTimeoutMS, and the operation's own `timeoutMS` bound (if any) covers it all; given
 * [wrap]'s `operationDeadlineNanos`, the machine callback is told the remaining timeoutMS (auth.md
 * "OIDC Callback"), else 1 minute; the human callback always 5 minutes.
 * Stateless; the wrapper has the wrapped connection's concurrency contract.
 */
@InternalMooringApi
public object Reauthentication {
    /** ReauthenticationRequired. */
    internal const val REAUTHENTICATION_REQUIRED: Int = 391

    /**
     * [view] (for example the command-monitored view of [connection]) with reauthentication on
     * 391 for [connection], a checked-out pooled connection or a raw one; [view] itself when its
     * mechanism cannot reauthenticate. [operationDeadlineNanos] is the [System.nanoTime] deadline of
     * the operation's timeoutMS (null without one), which the operation enforces around its commands.
     */
    public fun wrap(connection: Connection, view: Connection = connection, operationDeadlineNanos: Long? = null): Connection {
        val raw = ((connection as? PooledConnection)?.raw ?: connection) as? SocketConnection ?: return view
        return if (raw.canReauthenticate) Reauthenticating(view, raw, operationDeadlineNanos) else view
    }

    private class Reauthenticating(
        private val view: Connection,
        private val raw: SocketConnection,
        private val operationDeadlineNanos: Long?,
    ) : Connection by view {
        override suspend fun command(database: String, command: BsonDocument): BsonDocument {
            try {
                return view.command(database, command)
            } catch (e: MongoCommandException) {
                if (e.code != REAUTHENTICATION_REQUIRED) throw e
                try {
                    if (operationDeadlineNanos == null) raw.reauthenticate() else withContext(OperationDeadline(operationDeadlineNanos)) { raw.reauthenticate() }
                } catch (failure: Exception) {
                    failure.addSuppressed(e)
                    throw failure
                }
            }
            return view.command(database, command)
        }

        override fun toString(): String = "Reauthenticating($view)"
    }
}
