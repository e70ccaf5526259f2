package dev.mooring.sdam.internal.monitor

import dev.mooring.sdam.ServerDescription

/**
 * What one monitor check produced; the topology applies it in its critical section
 * (server-monitoring.md "Network or command error during server check": mark Unknown and clear
 * the pool together). Internal API, not stable. Immutable.
 */
internal class CheckOutcome(
    /** From the hello reply (success) or [ServerDescription.unknown] with the error (failure). */
    internal val description: ServerDescription,
    /** The check's failure, if any. */
    internal val error: Throwable?,
    /** True when the check failed: the server's pool must be cleared together with marking it Unknown. */
    internal val clearPool: Boolean,
    /** True when the failure was a network timeout: the clear must interrupt in-use connections. */
    internal val interruptInUseConnections: Boolean,
) {
    override fun toString(): String =
        "CheckOutcome($description, error=${error?.let { it::class.simpleName + ": " + it.message }}, " +
            "clearPool=$clearPool, interruptInUseConnections=$interruptInUseConnections)"
}

/**
 * Receives a monitor's [CheckOutcome]s. Internal API, not stable.
 *
 * A monitor calls it from its own coroutine, sequentially (never concurrently for one monitor),
 * in the order the checks completed; the next check does not start (and the next streamed reply
 * is not read) until it returns. It may suspend (e.g. on the topology's lock) and may call back
 * into the monitor ([ServerMonitor.requestImmediateCheck], [ServerMonitor.cancelCheck]). An
 * exception it throws is logged and does not stop the monitor; cancellation of the monitor
 * cancels a suspended call.
 */
internal fun interface CheckOutcomeHandler {
    /** Applies [outcome] to the topology. */
    suspend fun onCheckOutcome(outcome: CheckOutcome)
}
