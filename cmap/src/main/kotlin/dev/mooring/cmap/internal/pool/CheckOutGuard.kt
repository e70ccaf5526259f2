package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.PoolClosedException
import dev.mooring.events.InternalMooringApi
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.Job

/**
 * Lets the cluster fail the checkouts of its operations when it begins closing, without closing
 * the pools (the cluster still checks out for `endSessions` and lets running operations finish).
 * One guard per cluster; a checkout made through it ([checkOut]) costs nothing more than a plain
 * one (no job, no handler per checkout).
 *
 * Once [raise]d, a checkout through this guard fails with [PoolClosedException] (with a
 * ConnectionCheckOutFailed event, reason POOL_CLOSED), whether it starts later, waits in a
 * pool's queue ([failWaiting] fails those) or waits for the connection being established for it.
 * The flag is read under each pool's lock and [failWaiting] takes that lock, so a checkout is
 * either failed by [failWaiting] or sees the flag; a pool created after [raise] sees the flag.
 *
 * Only for pools made by the `ConnectionPool` factory function (the cluster's own); another
 * [ConnectionPool] is refused with [IllegalArgumentException].
 *
 * Thread-safe. [raise] is idempotent and never suspends.
 */
@InternalMooringApi
public class CheckOutGuard {
    private val signal: CompletableJob = Job()

    /** Completes when [raise] is called (checkouts waiting for their connection's establishment, and the cluster's selection, wait on it). */
    public val raised: Job get() = signal

    /** True once [raise] was called. */
    public val isRaised: Boolean get() = signal.isCompleted

    /** Refuses every checkout through this guard from now on. Call [failWaiting] for each pool next. */
    public fun raise() {
        signal.complete()
    }

    /** [ConnectionPool.checkOut] that fails with [PoolClosedException] once this guard is raised (see the class). */
    public suspend fun checkOut(pool: ConnectionPool): Connection = pool.own().checkOutGuarded(this)

    /** Fails the checkouts through this guard that wait in [pool]'s queue; after [raise]. Suspends for the pool's lock only. */
    public suspend fun failWaiting(pool: ConnectionPool) {
        check(isRaised) { "failWaiting is for a raised guard: call raise first" }
        pool.own().failGuarded(this)
    }

    private fun ConnectionPool.own(): DefaultConnectionPool =
        requireNotNull(this as? DefaultConnectionPool) { "a CheckOutGuard works with the pools of the ConnectionPool factory only: $this" }
}
