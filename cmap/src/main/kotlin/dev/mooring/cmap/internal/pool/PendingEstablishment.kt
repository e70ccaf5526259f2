package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Job

/**
 * A connection being established by a pool-owned coroutine ([job]). [owner] is the checkout it
 * is established for (null for minPoolSize population, or after the owner was cancelled: the
 * connection then goes to the oldest waiter or the available list). The pool completes
 * [outcome] under its lock, for the owner only (see [Established]). Fields are guarded by the
 * pool's lock.
 */
internal class PendingEstablishment(
    @JvmField val connection: PooledConnection,
    @JvmField var owner: Waiter?,
) : Handed {
    @JvmField val outcome = CompletableDeferred<Established>()
    @JvmField var job: Job? = null

    /** Set by clear(interruptInUseConnections = true) before cancelling [job]. */
    @JvmField var interrupted = false

    override fun equals(other: Any?): Boolean = this === other

    override fun hashCode(): Int = connection.hashCode()
}
