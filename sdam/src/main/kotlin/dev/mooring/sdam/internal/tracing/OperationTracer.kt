package dev.mooring.sdam.internal.tracing

import dev.mooring.cmap.Connection
import dev.mooring.events.EventListener

/**
 * Internal API, not stable: traces one cluster's operations. Implemented with OpenTelemetry by
 * [OpenTelemetryTracer]; this interface names no OpenTelemetry type, so a cluster without
 * tracing never loads the OpenTelemetry API. Thread-safe.
 */
internal interface OperationTracer {
    /**
     * Runs [block] inside an operation span named [name] (`runCommand`, or the command name of a
     * retryable read or write) on [database] and [collection] when known; records [block]'s
     * error on the span and rethrows it.
     */
    suspend fun <T> operation(name: String, database: String?, collection: String?, block: suspend () -> T): T

    /**
     * Opens the span of a transaction that starts now ([TransactionSpan]), its parent the calling
     * thread's current context (a coroutine's OpenTelemetry context element makes it current).
     */
    fun startTransaction(): TransactionSpan

    /** [connection], just checked out by the current operation (recorded on its span), with a command span for each command it sends (sensitive commands excepted). */
    fun traced(connection: Connection): Connection

    /** Records server selection and connection checkout failures (pool events) on the current operation span. */
    val poolListener: EventListener
}
