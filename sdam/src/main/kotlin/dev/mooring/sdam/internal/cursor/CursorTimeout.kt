package dev.mooring.sdam.internal.cursor

import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.TimeoutMode
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.withTimeout

/**
 * The `timeoutMS` of one cursor (client-side-operations-timeout.md, "Cursors"): [timeoutMS]
 * (null: none) bounds the cursor's whole life from its creation in [TimeoutMode.CURSOR_LIFETIME],
 * each command separately in [TimeoutMode.ITERATION]. killCursors gets a fresh [closeBoundMS]
 * (timeoutMS when set), so closing never blocks longer than that. Immutable.
 */
internal class CursorTimeout(private val timeoutMS: Long?, private val mode: TimeoutMode, fallbackCloseBoundMS: Long) {
    private val startNanos = System.nanoTime()

    /** How long killCursors may take. */
    val closeBoundMS: Long = timeoutMS ?: fallbackCloseBoundMS

    /** The timeoutMS of the initial command (the runner bounds it). */
    val forInitialCommand: Long? get() = timeoutMS

    /** Runs the getMore [block] under the cursor's remaining (or per-iteration) time. */
    suspend fun <T> bounded(commandName: String, block: suspend () -> T): T {
        val total = timeoutMS ?: return block()
        val limit = if (mode == TimeoutMode.ITERATION) total else total - (System.nanoTime() - startNanos) / 1_000_000
        if (limit <= 0) throw MongoOperationTimeoutException("$commandName: the cursor's timeoutMS=$total ms expired")
        try {
            return withTimeout(limit) { block() }
        } catch (e: TimeoutCancellationException) {
            currentCoroutineContext().ensureActive() // an outer cancellation is not ours to translate
            throw MongoOperationTimeoutException("$commandName exceeded the cursor's timeoutMS=$total ms ($mode)", e)
        }
    }
}
