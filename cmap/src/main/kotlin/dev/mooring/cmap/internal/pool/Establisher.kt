package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.EstablishmentFailure
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.slf4j.LoggerFactory
import kotlin.coroutines.cancellation.CancellationException

/**
 * The I/O half of an establishment: runs in a pool-owned coroutine, outside the lock, the
 * connection's handshake, tells the pool's owner (SDAM) of an error through [onEstablishmentError],
 * then records the end under the lock ([PoolStateMachine.establishmentFinished]).
 */
internal class Establisher(
    private val address: ServerAddress,
    private val loadBalanced: Boolean,
    private val lock: PoolLock,
    private val machine: PoolStateMachine,
    private val poolJob: Job,
    private val onEstablishmentError: suspend (EstablishmentFailure) -> Unit,
) {
    suspend fun establish(p: PendingEstablishment) {
        var error: Throwable? = null
        try {
            p.connection.raw.establish()
        } catch (t: Throwable) {
            error = t
        }
        if (error != null && !p.interrupted && poolJob.isActive) {
            if (error is CancellationException) {
                error = MongoNetworkException("establishing connection ${p.connection.id} to $address was cancelled", address, p.connection.gen, false, error)
            }
            BackpressureLabels.applyTo(error, helloCompleted = p.connection.raw.description != null)
            // SDAM hears of the error (and clears the pool) before the connection is closed and
            // before a waiting checkout fails, owned or not: the order of the SDAM unified tests
            // (PoolCleared, then ConnectionClosed, then ConnectionCheckOutFailed). The checkout's
            // own report of the same error is then stale (older generation) and changes nothing.
            report(p, error)
        }
        lock.withLock { machine.establishmentFinished(p, error) }
    }

    private suspend fun report(p: PendingEstablishment, error: Throwable) {
        // In load-balanced mode a connection whose hello succeeded (authentication failed after it)
        // belongs to the service the hello named, at that service's current generation.
        val sid = p.connection.serviceId ?: if (loadBalanced) p.connection.raw.description?.serviceId else null
        val gen = if (loadBalanced && sid != null) lock.withLock { machine.serviceGeneration(sid) } else p.connection.gen
        val f = EstablishmentFailure(address, gen, sid, error)
        try {
            withContext(NonCancellable) { onEstablishmentError(f) }
        } catch (t: Throwable) {
            log.warn("the establishment error hook of the pool for {} failed", address, t)
        }
    }

    private companion object {
        private val log = LoggerFactory.getLogger("dev.mooring.cmap.ConnectionPool")
    }
}
