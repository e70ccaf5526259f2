package dev.mooring.sdam.internal.tracing

import kotlin.coroutines.CoroutineContext

/**
 * Internal API, not stable: the span of one transaction, the pseudo-operation `transaction`
 * (open-telemetry.md "Transactions"): opened at `startTransaction`, the parent of the operation
 * spans of the transaction's operations ([parent] is the context they run under), finished by
 * its commit or abort ([end], idempotent). Thread-safe.
 */
internal interface TransactionSpan {
    /** The coroutine context whose OpenTelemetry context has this span current. */
    val parent: CoroutineContext

    /** Finishes the span (once; later calls do nothing). */
    fun end()
}
