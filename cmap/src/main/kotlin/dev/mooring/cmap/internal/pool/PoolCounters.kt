package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.ConnectionPurpose

/**
 * The pool's connection gauges, kept in one place: a connection's [ConnState] and
 * [ConnectionPurpose] change only through [created], [moveTo] and [repurpose], which update the
 * counts with them. The available count and the wait-queue size are the sizes of their
 * collections. Written under the pool's lock; reads without it are racy (metrics scrapers).
 */
internal class PoolCounters {
    /** Connections not closed: pending + available + in use. */
    var total = 0
        private set

    /** Connections being established. */
    var pending = 0
        private set

    /** Connections checked out. */
    var inUse = 0
        private set

    /** In-use connections pinned to a cursor. */
    var pinnedToCursors = 0
        private set

    /** In-use connections pinned to a transaction. */
    var pinnedToTransactions = 0
        private set

    /** In-use connections held for a single operation. */
    val inUseForOperations: Int get() = inUse - pinnedToCursors - pinnedToTransactions

    /** Counts a new connection, in [ConnState.PENDING]. */
    fun created(c: PooledConnection) {
        c.state = ConnState.PENDING
        count(ConnState.PENDING, +1)
    }

    /** Moves [c] to state [to]; leaving [ConnState.IN_USE] unpins it. */
    fun moveTo(c: PooledConnection, to: ConnState) {
        val from = c.state
        if (from == to) return
        if (from == ConnState.IN_USE) repurpose(c, ConnectionPurpose.OPERATION)
        count(from, -1)
        count(to, +1)
        c.state = to
    }

    /** Records what the holder of the in-use [c] keeps it for. */
    fun repurpose(c: PooledConnection, purpose: ConnectionPurpose) {
        pin(c.purpose, -1)
        c.purpose = purpose
        pin(purpose, +1)
    }

    private fun count(state: ConnState, delta: Int) {
        when (state) {
            ConnState.PENDING -> pending += delta
            ConnState.IN_USE -> inUse += delta
            ConnState.AVAILABLE -> Unit
            ConnState.CLOSED -> return
        }
        total += delta
    }

    private fun pin(purpose: ConnectionPurpose, delta: Int) {
        when (purpose) {
            ConnectionPurpose.CURSOR -> pinnedToCursors += delta
            ConnectionPurpose.TRANSACTION -> pinnedToTransactions += delta
            ConnectionPurpose.OPERATION -> Unit
        }
    }
}
