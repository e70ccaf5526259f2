package dev.mooring.cmap.internal.pool

/**
 * What a checkout's transition decided, under the pool's lock. No allocation on the common
 * path: an idle connection is returned as itself.
 * - [PooledConnection]: an idle connection, already in use (CheckedOut emitted);
 * - [Waiter]: the checkout waits, queued or already handed an establishment it owns;
 * - [Failed]: the pool is paused or closed (CheckOutFailed emitted).
 */
internal sealed interface CheckOutOutcome

/**
 * What the pool hands a [Waiter], exactly once, under its lock:
 * - [PooledConnection]: a connection, already in use (CheckedOut emitted);
 * - [PendingEstablishment]: an establishment the waiter now owns;
 * - [Failed]: the error to throw (CheckOutFailed emitted).
 */
internal sealed interface Handed

/**
 * How an establishment ends for the checkout that owns it: the [PooledConnection] (in use,
 * CheckedOut emitted) or [Failed] (CheckOutFailed emitted).
 */
internal sealed interface Established

/** A checkout that fails with [error]; its CheckOutFailed event was emitted. */
internal class Failed(@JvmField val error: Throwable) : CheckOutOutcome, Handed, Established

/** What clear() leaves to do outside the lock. */
internal sealed interface ClearOutcome {
    /** The pool was closed: nothing happened. */
    data object Ignored : ClearOutcome

    /** The pool was cleared; [connections] and [establishments] are to be interrupted (empty unless interruptInUseConnections). */
    class Cleared(
        @JvmField val connections: List<PooledConnection>,
        @JvmField val establishments: List<PendingEstablishment>,
    ) : ClearOutcome
}
