package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.CompletableDeferred

/**
 * One checkout waiting in the pool's wait queue. The pool completes [result] under its lock
 * with exactly one of: a [PooledConnection] (already marked in use, CheckedOut emitted), a
 * [PendingEstablishment] this waiter owns, or a [Throwable] to throw (CheckOutFailed emitted).
 * [queued] and the links are guarded by the pool's lock.
 */
internal class Waiter(@JvmField val startNanos: Long) {
    @JvmField val result = CompletableDeferred<Any>()
    @JvmField var queued = false
    @JvmField var prev: Waiter? = null
    @JvmField var next: Waiter? = null
}

/** FIFO of [Waiter]s with O(1) removal of a cancelled or timed-out waiter. Not thread-safe: guarded by the pool's lock. */
internal class WaitQueue {
    private var head: Waiter? = null
    private var tail: Waiter? = null

    /** Number of queued waiters. */
    var size: Int = 0
        private set

    fun isEmpty(): Boolean = head == null

    fun addLast(w: Waiter) {
        check(!w.queued) { "waiter already queued" }
        w.queued = true
        w.prev = tail
        w.next = null
        val t = tail
        if (t == null) head = w else t.next = w
        tail = w
        size++
    }

    /** Removes and returns the oldest waiter, or null. */
    fun pollFirst(): Waiter? {
        val h = head ?: return null
        remove(h)
        return h
    }

    /** Removes [w] if queued; returns whether it was. */
    fun remove(w: Waiter): Boolean {
        if (!w.queued) return false
        val p = w.prev
        val n = w.next
        if (p == null) head = n else p.next = n
        if (n == null) tail = p else n.prev = p
        w.prev = null
        w.next = null
        w.queued = false
        size--
        return true
    }

    /** Removes every waiter, oldest first, and hands each to [action]. */
    inline fun drain(action: (Waiter) -> Unit) {
        while (true) {
            val w = pollFirst() ?: return
            action(w)
        }
    }
}
