package dev.mooring.sdam.internal.retry

import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.topology.OperationRetry

/**
 * The retry policy of a retryable read (retryable-reads.md). With [enabled] (retryReads), a
 * network error, a pool-cleared error or a server error with a retryable code is retried once
 * after a fresh selection that, in a sharded cluster, avoids the failed mongos (a pool-cleared
 * error always avoids its server, as for every operation). When the retry cannot select a
 * server the first error is surfaced, otherwise the retry's. Without [enabled] nothing is
 * retried, not even a pool-cleared error (an interrupted command may have reached the server).
 * Stateless; thread-safe.
 */
internal class RetryableRead(private val enabled: Boolean) : OperationRetry {
    override val retriesOverload: Boolean get() = enabled

    override fun shouldRetry(error: Throwable): Boolean =
        enabled && RetryableErrors.isRetryableRead(error)

    override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> {
        val address = (error as? MongoServerException)?.address ?: return emptySet()
        return if (error is PoolClearedException || topology.type == TopologyType.SHARDED) setOf(address) else emptySet()
    }

    override fun surface(firstError: Throwable, retryError: Throwable): Throwable =
        if (RetryableErrors.isSelectionFailure(retryError)) firstError else retryError
}
