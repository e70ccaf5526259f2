package dev.mooring.cmap.internal.pool

/**
 * A FIFO of served [Waiter]s, linked through [Waiter.nextServed]: one lane of [ServedWaiters].
 *
 * Made for exactly that lane's access pattern, which lets it go without a CAS or a node per
 * element (a `ConcurrentLinkedDeque` costs a node allocation, two CASes and an unlink per
 * waiter):
 * - [add] is called only under the pool's lock, so producers never race each other; it links
 *   the waiter behind [tail] with one volatile write, which publishes the waiter's fields
 *   (its outcome, its parked continuation) to the consumer;
 * - [peek] and [poll] are called only by the lane's one drainer at a time (the lane's `draining`
 *   flag), so consumers never race each other either;
 * - [isEmpty] may be called from any thread (a volatile read).
 *
 * The consumer and a producer may run at the same time: [head] is a sentinel, the last waiter
 * polled (initially [stub]), and the queue's first element is the sentinel's [Waiter.nextServed].
 * A producer only writes [tail]'s link, and the consumer never unlinks the node [tail] points to
 * (it becomes the sentinel instead), so an element added while the last one is polled is never
 * lost. The sentinel keeps one polled waiter reachable until the next poll, no more.
 *
 * A waiter is added at most once in its life ([Waiter.hand] serves it once), so its link is
 * never reused.
 */
internal class ServedQueue {
    private val stub = Waiter(0L)

    /** The sentinel: the last waiter polled, or [stub]. Written by the drainer only. */
    @Volatile private var head: Waiter = stub

    /** The last waiter added, or [head]'s initial value. Guarded by the pool's lock. */
    private var tail: Waiter = stub

    /** Under the pool's lock: appends [w]. */
    fun add(w: Waiter) {
        tail.nextServed = w
        tail = w
    }

    /** True when nothing is queued; any thread. */
    fun isEmpty(): Boolean = head.nextServed == null

    /** The drainer: the oldest waiter, left in the queue, or null. */
    fun peek(): Waiter? = head.nextServed

    /** The drainer: removes and returns the oldest waiter, or null. */
    fun poll(): Waiter? {
        val h = head
        val first = h.nextServed ?: return null
        head = first
        // The old sentinel is behind the consumer and is not the tail (first follows it): unlink
        // it so a long-lived lane does not chain garbage.
        h.nextServed = null
        return first
    }
}
