package dev.mooring.sdam.internal.retry

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.MooringException
import kotlin.math.min
import kotlin.random.Random

/**
 * The overload retry policy of client-backpressure.md: which errors are (retryable) overload
 * errors, how many retries an operation gets once it met one, and the backoff before each.
 * Internal API, not stable. Immutable apart from the jitter source; thread-safe.
 *
 * - An overload error carries the `SystemOverloadedError` label; a retryable overload error
 *   carries `RetryableError` too. Only the latter is retried by this policy (other retry
 *   policies may retry an overload error that is retryable for them).
 * - Once any attempt failed with an overload error, the operation's retries are capped at
 *   [maxRetries] (`maxAdaptiveRetries`, default 2), counting every retry, whatever its cause.
 * - Before a retry after an overload error the operation sleeps
 *   `jitter * min(MAX_BACKOFF_MS, base * 2^attempt)` ms, `attempt` being the retry number
 *   (1, 2, ...), `base` the error's positive `baseBackoffMS` or [BASE_BACKOFF_MS], `jitter`
 *   from [jitter] in [0, 1).
 * - With [retarget] (`enableOverloadRetargeting`), the failed server is deprioritized in the
 *   retry's selection.
 */
internal class OverloadRetry(
    /** `maxAdaptiveRetries`: the most retries once an overload error was seen. */
    internal val maxRetries: Int,
    /** `enableOverloadRetargeting`. */
    internal val retarget: Boolean,
    /** The jitter source, uniform in [0, 1). */
    private val jitter: () -> Double = { Random.nextDouble() },
) {
    /** The backoff in milliseconds before retry number [attempt] (1-based) after the overload error [error]. */
    internal fun backoffMillis(attempt: Int, error: Throwable): Long {
        val base = baseBackoffMS(error)?.takeIf { it > 0 } ?: BASE_BACKOFF_MS
        val exponential = base * Math.pow(2.0, attempt.toDouble())
        return (jitter() * min(MAX_BACKOFF_MS.toDouble(), exponential)).toLong()
    }

    internal companion object {
        /** The driver's base backoff (BASE_BACKOFF). */
        internal const val BASE_BACKOFF_MS: Long = 100

        /** The backoff cap (MAX_BACKOFF). */
        internal const val MAX_BACKOFF_MS: Long = 10_000

        /** The default of `maxAdaptiveRetries` (MAX_RETRIES). */
        internal const val DEFAULT_MAX_RETRIES: Int = 2

        /** The label of overload errors. */
        internal const val SYSTEM_OVERLOADED_ERROR: String = "SystemOverloadedError"

        /** The label of errors safe to retry whatever the command. */
        internal const val RETRYABLE_ERROR: String = "RetryableError"

        /** True for an overload error (labelled `SystemOverloadedError`). */
        @JvmStatic
        internal fun isOverload(e: Throwable): Boolean = e is MooringException && e.hasErrorLabel(SYSTEM_OVERLOADED_ERROR)

        /** True for a retryable overload error (labelled `SystemOverloadedError` and `RetryableError`). */
        @JvmStatic
        internal fun isRetryableOverload(e: Throwable): Boolean = isOverload(e) && (e as MooringException).hasErrorLabel(RETRYABLE_ERROR)

        /** The server-supplied `baseBackoffMS` of a command error, or null. */
        @JvmStatic
        internal fun baseBackoffMS(e: Throwable): Long? =
            (e as? MongoCommandException)?.response?.get("baseBackoffMS")?.takeIf { it.isNumber }?.asNumber()?.longValue()
    }
}
