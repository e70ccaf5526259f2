package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.ServerAddress

/**
 * What an error thrown while an operation held a connection means, decided once (the step
 * "classify the error" of select → check out → send → classify → hand to SDAM → check in).
 * Errors of the checkout itself are not classified here: the pool reports every establishment
 * error to SDAM itself (`ConnectionPool`'s `onEstablishmentError`, before the checkout fails),
 * and its other checkout errors (pool cleared or closed, wait queue timeout) are not SDAM's.
 */
internal sealed interface AttemptFailure {
    /** The error as thrown. */
    val error: Throwable

    /**
     * A network or protocol error: the connection is perished (closed when checked in) and SDAM
     * handles the error (application errors, network rules).
     */
    class ConnectionBroken(override val error: MongoServerException) : AttemptFailure

    /** Any other server error (`ok: 0`, a handshake or authentication failure): SDAM handles it; the connection stays. */
    class ServerError(override val error: MongoServerException) : AttemptFailure

    /**
     * Not SDAM's: the connection was interrupted by a pool clear SDAM itself made
     * ([PoolClearedException]), or the error is the client's own (cancellation, a timeout,
     * a bad argument, a write concern error reply handled on its own path).
     */
    class NotForSdam(override val error: Throwable) : AttemptFailure

    companion object {
        fun of(error: Throwable): AttemptFailure = when (error) {
            is PoolClearedException -> NotForSdam(error)
            is MongoServerException -> if (error.perishesConnection) ConnectionBroken(error) else ServerError(error)
            else -> NotForSdam(error)
        }
    }
}

/**
 * Classifies [error], which an operation hit on [connection] to [address], and hands it to SDAM:
 * the one place the operation path reports an error to SDAM. (The connection itself was marked
 * perished by the command that failed, `MongoServerException.perishesConnection`.)
 */
internal suspend fun Topology.onAttemptFailure(address: ServerAddress, connection: Connection, error: Throwable) {
    when (val failure = AttemptFailure.of(error)) {
        is AttemptFailure.ConnectionBroken -> onApplicationError(address, failure.error, connection.description?.serviceId)
        is AttemptFailure.ServerError -> onApplicationError(address, failure.error, connection.description?.serviceId)
        is AttemptFailure.NotForSdam -> Unit
    }
}
