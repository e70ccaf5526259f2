package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.TopologyDescription

/**
 * Internal API, not stable: how [OperationRunner] retries an operation. An operation has at
 * most two attempts; the second runs after a fresh server selection, and only when
 * [shouldRetry] accepts the first attempt's error. Cancellation (timeouts included) is never
 * retried, whatever [shouldRetry] says.
 *
 * An instance may hold per-operation state (a retryable write's session and txnNumber); the
 * runner calls it from the operation's coroutine only, in the order [starting], [shouldRetry],
 * [deprioritize], then [surface] when the retry failed too.
 */
public interface OperationRetry {
    /** Called once before the first attempt with the latest topology description. */
    public fun starting(topology: TopologyDescription) {}

    /** True when the first attempt's [error] may be retried once. */
    public fun shouldRetry(error: Throwable): Boolean

    /** The servers the retry's selection avoids unless nothing else is suitable. */
    public fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress>

    /** The error the operation fails with when the retry failed with [retryError] after [firstError]. */
    public fun surface(firstError: Throwable, retryError: Throwable): Throwable = retryError

    public companion object {
        /** Never retries. */
        public val NONE: OperationRetry = object : OperationRetry {
            override fun shouldRetry(error: Throwable): Boolean = false
            override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> = emptySet()
        }

        /** Retries a [PoolClearedException] once (it never reached the server), avoiding the cleared server. */
        public val POOL_CLEARED: OperationRetry = object : OperationRetry {
            override fun shouldRetry(error: Throwable): Boolean = error is PoolClearedException
            override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> =
                setOfNotNull((error as? PoolClearedException)?.address)
        }
    }
}
