package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription

/**
 * Internal API, not stable: how [OperationRunner] retries an operation. An operation has at
 * most two attempts (more after overload errors, see [retriesOverload]); each retry runs after
 * a fresh server selection, and only when [shouldRetry] accepts the previous attempt's error
 * or it is a retryable overload error the operation may retry. Cancellation (timeouts included) is never
 * retried, whatever [shouldRetry] says.
 *
 * An instance may hold per-operation state (a retryable write's session and txnNumber); the
 * runner calls it from the operation's coroutine only, in the order [checkOutFailed] (when an
 * attempt's checkout failed), [shouldRetry], [deprioritize], then [surface] when the retry failed too.
 */
internal interface OperationRetry {
    /**
     * Called when an attempt could not check out a connection to [server], the server its
     * selection chose, with [error]: the establishment of a new connection failed (network error,
     * handshake or authentication error) or the pool was cleared. Called before [shouldRetry]
     * sees [error].
     */
    fun checkOutFailed(server: ServerDescription, error: Throwable) {}

    /** True when the first attempt's [error] may be retried once. */
    fun shouldRetry(error: Throwable): Boolean

    /**
     * True when the operation may also be retried after a retryable overload error
     * (client-backpressure.md: reads with retryReads, writes with retryWrites, runCommand with
     * both); see [dev.mooring.sdam.internal.retry.OverloadRetry].
     */
    val retriesOverload: Boolean get() = false

    /** The servers the retry's selection avoids unless nothing else is suitable. */
    fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress>

    /** The error the operation fails with when the retry failed with [retryError] after [firstError]. */
    fun surface(firstError: Throwable, retryError: Throwable): Throwable = retryError

    companion object {
        /** [base] with overload retries allowed when [allowed]. */
        internal fun withOverloadRetries(base: OperationRetry, allowed: Boolean): OperationRetry = if (!allowed) base else object : OperationRetry by base {
            override val retriesOverload: Boolean get() = true
        }

        /** Never retries. */
        internal val NONE: OperationRetry = object : OperationRetry {
            override fun shouldRetry(error: Throwable): Boolean = false
            override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> = emptySet()
        }

        /** Retries a [PoolClearedException] once (it never reached the server), avoiding the cleared server. */
        internal val POOL_CLEARED: OperationRetry = object : OperationRetry {
            override fun shouldRetry(error: Throwable): Boolean = error is PoolClearedException
            override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> =
                setOfNotNull((error as? PoolClearedException)?.address)
        }
    }
}
