package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.suspendCancellableCoroutine
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.coroutines.resume

/**
 * One checkout waiting in the pool's wait queue. The pool hands it exactly one [Handed] outcome,
 * under its lock, with [hand].
 * [outcome], [queued] and the links are guarded by the pool's lock.
 *
 * The hand-over is a single-shot slot rather than a Deferred: the waiter parks its continuation in
 * [slot] with one CAS, and [hand] swaps in [HANDED] and resumes whatever continuation it found, so
 * exactly one side resumes it whether the hand-over comes before or after the waiter suspends.
 */
internal class Waiter(@JvmField val startNanos: Long) : CheckOutOutcome {
    /** The handed outcome, or null while waiting. */
    @JvmField var outcome: Handed? = null
    @JvmField var queued = false
    @JvmField var prev: Waiter? = null
    @JvmField var next: Waiter? = null

    /** null (waiting, not parked), the parked continuation, or [HANDED] (a synchronisation slot, not an outcome). */
    @Volatile private var slot: Any? = null

    /** True once an outcome was handed; safe without the pool's lock. */
    val isHandedVolatile: Boolean get() = slot === HANDED

    /** Under the pool's lock: records [o] and resumes the parked waiter, if any. At most once. */
    fun hand(o: Handed) {
        check(outcome == null) { "waiter handed twice" }
        outcome = o
        val s = SLOT.getAndSet(this, HANDED)
        if (s is CancellableContinuation<*>) {
            @Suppress("UNCHECKED_CAST")
            (s as CancellableContinuation<Handed>).resume(o)
        }
    }

    /**
     * Suspends until an outcome is handed and returns it (at once when it already was). Cancellable:
     * a cancelled caller gets CancellationException, and must then give back whatever [outcome]
     * holds (the hand-over may have raced with the cancellation).
     */
    suspend fun awaitOutcome(): Handed {
        if (slot === HANDED) return outcomeAfterHand()
        return suspendCancellableCoroutine { cont ->
            if (!SLOT.compareAndSet(this, null, cont)) cont.resume(outcomeAfterHand())
        }
    }

    // The CAS/getAndSet on slot orders the write of outcome before this read.
    private fun outcomeAfterHand(): Handed = outcome!!

    private companion object {
        val HANDED = Any()
        val SLOT: AtomicReferenceFieldUpdater<Waiter, Any?> =
            AtomicReferenceFieldUpdater.newUpdater(Waiter::class.java, Any::class.java, "slot")
    }
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
