package dev.mooring.sdam.internal.session

import dev.mooring.sdam.internal.tracing.TransactionSpan
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.internal.topology.ConnectionPin

/**
 * Internal API, not stable: how a session sends the commands that end its transaction, the
 * cluster's part of `commitTransaction` / `abortTransaction` (the operation is
 * `EndTransactionOperation`). Thread-safe.
 */
internal interface TransactionEnds {
    /** Sends `commitTransaction` ([commit]) or `abortTransaction` for [session], with their retry rules. */
    suspend fun end(session: ClientSession, commit: Boolean, timeout: OperationTimeout)

    /** Aborts [session]'s transaction after the session was closed, in the cluster's scope (errors ignored), then calls [done]. */
    fun abortAfterClose(session: ClientSession, done: () -> Unit)

    /**
     * Releases a transaction's [pin] (checks its connection in) without suspending the caller:
     * started on the caller's thread, so an uncontended check-in is done when this returns; one
     * that must wait for the pool's lock completes in the cluster's scope, even once it is cancelled.
     */
    fun release(pin: ConnectionPin)

    /** The span of a transaction that starts now, when the cluster traces (open-telemetry.md "Transactions"); null otherwise. */
    fun transactionSpan(): TransactionSpan? = null
}
