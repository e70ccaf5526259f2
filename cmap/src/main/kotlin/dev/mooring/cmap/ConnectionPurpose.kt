package dev.mooring.cmap

/**
 * What a checked-out connection is held for (load-balancers.md "Connection Tracking"): a
 * connection is checked out for an [OPERATION] until [ConnectionPool.pin] says a cursor or a
 * transaction keeps it. Immutable.
 */
public enum class ConnectionPurpose {
    /** A single operation (the default of every checkout). */
    OPERATION,

    /** Pinned to a cursor until the cursor is exhausted or closed. */
    CURSOR,

    /** Pinned to a transaction until it ends. */
    TRANSACTION,
}
