package dev.mooring.sdam.internal.session

import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.TransactionState
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlin.math.min
import kotlin.math.pow
import kotlin.random.Random

/**
 * Internal API, not stable: `withTransaction`'s retry loop (transactions-convenient-api.md
 * "Sequence of Actions"): start, run the callback, commit; the callback retried (after an
 * exponential backoff with jitter, 5 ms growing by 1.5 per attempt up to 500 ms) on
 * `TransientTransactionError`, the commit on `UnknownTransactionCommitResult` unless
 * MaxTimeMSExpired, until [timeoutMS] (else 120 s) has passed since the call. Under [timeoutMS]
 * the call's [OperationTimeout] is stored on the session for its duration
 * ([ClientSession.withTransactionTimeout]): the callback's operations in the session and the
 * commit use what is left; the abort after a failed callback gets a fresh [timeoutMS]. When the
 * callback throws or the caller is cancelled while the transaction is open (starting or in
 * progress), `abortTransaction` runs in [NonCancellable] before the error propagates. [nanoTime],
 * [random] and [sleep] are replaceable for tests. Runs in its caller's coroutine.
 */
internal class ConvenientTransaction<T>(
    private val session: ClientSession,
    private val options: TransactionOptions,
    /** The call's timeoutMS (0: no limit); null: none, the 120 s limit. */
    private val timeoutMS: Long?,
    private val block: suspend (ClientSession) -> T,
    private val nanoTime: () -> Long = System::nanoTime,
    private val random: Random = Random.Default,
    private val sleep: suspend (Long) -> Unit = { delay(it) },
) {
    private val start = nanoTime()

    /** True under timeoutMS: an error that runs out of time is thrown as a [MongoOperationTimeoutException]. */
    private val csot = timeoutMS != null
    private val limitMS: Long = when (timeoutMS) {
        null -> DEFAULT_LIMIT_MS
        0L -> Long.MAX_VALUE
        else -> timeoutMS
    }

    private fun elapsedMS(): Long = (nanoTime() - start) / 1_000_000

    suspend fun run(): T {
        if (timeoutMS == null) return attempts()
        check(session.withTransactionTimeout == null) { "withTransaction is already running in this session" }
        session.withTransactionTimeout = OperationTimeout.start(timeoutMS)
        try {
            return attempts()
        } finally {
            session.withTransactionTimeout = null
        }
    }

    private suspend fun attempts(): T {
        var attempt = 0
        var last: Throwable? = null
        while (true) {
            if (attempt > 0) {
                val backoff = (random.nextDouble() * min(BACKOFF_INITIAL_MS * 1.5.pow(attempt), BACKOFF_MAX_MS)).toLong()
                if (elapsedMS() + backoff >= limitMS) throw outOfTime(last!!)
                sleep(backoff)
            }
            session.startTransaction(options)
            attempt++
            val result = try {
                block(session)
            } catch (e: Throwable) {
                last = e
                abortIfOpen()
                if (e !is CancellationException && hasLabel(e, TRANSIENT)) {
                    if (elapsedMS() < limitMS) continue
                    throw outOfTime(e)
                }
                throw e
            }
            val state = session.transactionState
            // the callback ended the transaction itself
            if (state == TransactionState.None || state == TransactionState.Aborted || state == TransactionState.Committed || state == TransactionState.CommittedEmpty) {
                return result
            }
            while (true) {
                try {
                    session.commitTransaction()
                    return result
                } catch (e: Throwable) {
                    if (e is CancellationException) throw e
                    last = e
                    if (hasLabel(e, UNKNOWN_COMMIT) && !isMaxTimeMSExpired(e)) {
                        if (elapsedMS() >= limitMS) throw outOfTime(e)
                        continue
                    }
                    if (hasLabel(e, TRANSIENT)) break // retry the whole transaction
                    throw e
                }
            }
        }
    }

    /** Aborts an open transaction, even when the caller is cancelled; its errors are the abort's own (ignored by it). */
    private suspend fun abortIfOpen() {
        if (session.transactionState == TransactionState.Starting || session.transactionState == TransactionState.InProgress) {
            // a fresh timeoutMS for the abort (client-side-operations-timeout.md), not what the callback left
            withContext(NonCancellable) { session.abortTransaction(timeoutMS) }
        }
    }

    /** [error] when there is no more time: as is without timeoutMS; with it, a timeout error carrying [error] and its labels. */
    private fun outOfTime(error: Throwable): Throwable {
        if (!csot || error is MongoOperationTimeoutException) return error
        return MongoOperationTimeoutException("withTransaction exceeded timeoutMS=$limitMS ms: ${error.message}", error).also { t ->
            (error as? MooringException)?.errorLabels?.forEach { t.addErrorLabel(it) }
        }
    }

    private fun hasLabel(e: Throwable, label: String) = e is MooringException && e.hasErrorLabel(label)

    private fun isMaxTimeMSExpired(e: Throwable): Boolean =
        (e is MongoCommandException && e.code == MAX_TIME_MS_EXPIRED) || (e is MongoOperationTimeoutException && e.cause.let { it is MongoCommandException && it.code == MAX_TIME_MS_EXPIRED })

    companion object {
        const val TRANSIENT = "TransientTransactionError"
        const val UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
        const val DEFAULT_LIMIT_MS = 120_000L
        private const val MAX_TIME_MS_EXPIRED = 50
        private const val BACKOFF_INITIAL_MS = 5.0
        private const val BACKOFF_MAX_MS = 500.0
    }
}
