package dev.mooring.sdam.internal.cursor

import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.internal.csot.OperationTimeout
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument

/**
 * The `timeoutMS` of one cursor (client-side-operations-timeout.md, "Cursors"), over
 * [OperationTimeout] (which computes every `maxTimeMS` and translates the server's errors):
 *
 * - [initial] is the timeout of the initial command, started when the cursor is created; in
 *   [TimeoutMode.CURSOR_LIFETIME] it also bounds every getMore (the cursor's lifetime).
 * - The initial command carries `maxTimeMS` ([initialCommand]) in CURSOR_LIFETIME mode and for a
 *   tailable-await cursor; in ITERATION mode otherwise it is bounded client-side only.
 * - Each getMore ([getMore]) runs under the remaining lifetime (CURSOR_LIFETIME) or a fresh
 *   timeoutMS (ITERATION), client-side only: no `maxTimeMS`, except a tailable-await cursor's
 *   await time, `min(maxAwaitTimeMS, remaining - minRoundTripTime)`. In ITERATION mode a getMore
 *   that continues the same `next` (it follows a getMore whose batch was empty, so no document
 *   was returned in between) runs under that getMore's timeout, not a fresh one: the timeout
 *   applies to the totality of the getMores of one `next` ("Cursors").
 * - killCursors gets a fresh timeout ([forClose]): the close's own timeoutMS when given, else the
 *   cursor's timeoutMS; bounded by it when positive, else by [fallbackCloseBoundMS].
 *
 * [timeoutMS] null: not set (legacy behaviour); 0: set, no limit (the CSOT error semantics and
 * the retries until the deadline apply). Used by its cursor's coroutine only.
 */
internal class CursorTimeout(
    val timeoutMS: Long?,
    private val mode: TimeoutMode,
    private val cursorType: CursorType,
    private val fallbackCloseBoundMS: Long,
    /**
     * The initial command's timeoutMS when not the cursor's (a change stream's resume runs under what
     * is left of the `next` that needed it, client-side-operations-timeout.md "Cursors"), else null.
     */
    initialTimeoutMS: Long? = null,
) {
    /** The initial command's timeout; the cursor's lifetime in CURSOR_LIFETIME mode. */
    val initial: OperationTimeout = OperationTimeout.start(initialTimeoutMS ?: timeoutMS)

    /** Milliseconds left of the current `next` in ITERATION mode (see [getMore]), or null without a timeoutMS or before a getMore. */
    fun iterationRemainingMS(): Long? = iteration?.remainingMS()

    /** The initial command as sent: with `maxTimeMS` from [initial] unless the spec forbids it (ITERATION mode, tailable non-await). */
    fun initialCommand(command: BsonDocument, server: ServerDescription?): BsonDocument =
        if (mode == TimeoutMode.CURSOR_LIFETIME || cursorType == CursorType.TAILABLE_AWAIT) initial.withMaxTimeMS(command, server) else command

    /** The timeout of the current `next` in ITERATION mode (the latest fresh one), or null before the first getMore. */
    private var iteration: OperationTimeout? = null

    /**
     * Runs the getMore [block] under this cursor's getMore timeout ([continuesNext]: the getMore
     * follows an empty batch of a getMore, and keeps its ITERATION timeout) (given to [block] for the
     * await `maxTimeMS` and error translation): [MongoOperationTimeoutException] when it expires
     * (at once when the lifetime already has), a MaxTimeMSExpired reply translated.
     */
    suspend fun <T> getMore(continuesNext: Boolean = false, block: suspend (OperationTimeout) -> T): T {
        val t = when {
            mode != TimeoutMode.ITERATION -> initial
            continuesNext -> iteration ?: OperationTimeout.start(timeoutMS).also { iteration = it }
            else -> OperationTimeout.start(timeoutMS).also { iteration = it }
        }
        val limit = t.remainingMS()
        try {
            if (limit == null) return block(t)
            if (t.expired()) throw MongoOperationTimeoutException("getMore: the cursor's timeoutMS=$timeoutMS ms expired ($mode)")
            return withTimeout(limit) { block(t) }
        } catch (e: TimeoutCancellationException) {
            currentCoroutineContext().ensureActive() // an outer cancellation is not ours to translate
            throw MongoOperationTimeoutException("getMore exceeded the cursor's timeoutMS=$timeoutMS ms ($mode)", e)
        }
    }

    /**
     * killCursors' timeout: [closeTimeoutMS] (the timeoutMS given for the close) when not null,
     * else the cursor's timeoutMS refreshed (even when the lifetime expired); its `maxTimeMS` only
     * with a timeoutMS set.
     */
    fun forClose(closeTimeoutMS: Long? = null): OperationTimeout = OperationTimeout.start(closeTimeoutMS ?: timeoutMS)

    /** How long killCursors may take: the close's timeoutMS ([closeTimeoutMS]) or else the cursor's, when positive; else the fallback bound. */
    fun closeBoundMS(closeTimeoutMS: Long? = null): Long = (closeTimeoutMS ?: timeoutMS)?.takeIf { it > 0 } ?: fallbackCloseBoundMS
}
