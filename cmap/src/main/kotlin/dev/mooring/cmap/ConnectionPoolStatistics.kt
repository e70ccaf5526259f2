package dev.mooring.cmap

/**
 * Gauges of one pool, read from the pool's own state (never derived from events, so they cannot
 * drift). An immutable snapshot; see [ConnectionPool.statistics] and
 * [ConnectionPool.statisticsSnapshot] for how consistent it is.
 */
public data class ConnectionPoolStatistics(
    /** The pool state. */
    val state: ConnectionPoolState,
    /** Pending + available + in use. */
    val totalConnections: Int,
    /** Established connections waiting to be checked out. */
    val availableConnections: Int,
    /** Connections being established. */
    val pendingConnections: Int,
    /** Connections checked out and not yet checked in. */
    val inUseConnections: Int,
    /** Checkouts waiting in the wait queue (not counting those waiting for their own establishment). */
    val waitQueueSize: Int,
    /** The pool generation (bumped by each clear). */
    val generation: Int,
    /** Of [inUseConnections], those pinned to a cursor (load-balanced mode). */
    val pinnedToCursors: Int = 0,
)
