package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.internal.connection.EventLoop
import dev.mooring.cmap.internal.connection.LoopBound
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.suspendCancellableCoroutine
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume

/**
 * One checkout waiting in the pool's wait queue. The pool hands it exactly one [Handed] outcome,
 * under its lock, with [hand].
 * [outcome] and [queued] are guarded by the pool's lock.
 *
 * The hand-over is a single-shot slot rather than a Deferred: the waiter parks its continuation in
 * [slot] with one CAS, and [hand] swaps in [HANDED]: a waiter that had not suspended yet sees it
 * and returns at once; one that had is queued in [ServedWaiters], which resumes it after the lock is
 * released, in hand-over order. Exactly one side resumes it either way. [guard], when set, is the
 * [CheckOutGuard] the checkout was made through (the cluster fails such waiters when it closes).
 */
internal class Waiter(@JvmField val startNanos: Long, @JvmField val guard: CheckOutGuard? = null) : CheckOutOutcome {
    /** The handed outcome, or null while waiting. */
    @JvmField var outcome: Handed? = null

    /** In the [WaitQueue] and not yet served, timed out nor abandoned. */
    @JvmField var queued = false

    /** The next waiter in its [ServedQueue], once served while suspended; see there. */
    @Volatile @JvmField var nextServed: Waiter? = null

    /** null (waiting, not parked), the parked continuation, or [HANDED] (a synchronisation slot, not an outcome). */
    @Volatile private var slot: Any? = null

    /** True once an outcome was handed; safe without the pool's lock. */
    val isHandedVolatile: Boolean get() = slot === HANDED

    /** The continuation [hand] found parked, until it is resumed from [ServedWaiters]. */
    private var parked: CancellableContinuation<Handed>? = null

    /**
     * The parked continuation's interceptor, read when it parks (its context is then in the cache):
     * reading it at the hand-over instead would cost a cache miss on the coroutine's context per
     * waiter. Written before the CAS that parks.
     */
    private var interceptor: ContinuationInterceptor? = null

    /**
     * Under the pool's lock: records [o]; if the waiter is suspended, queues it in [served] to be
     * resumed after the lock is released (or resumes it at once when [ServedWaiters.inline] is off).
     * At most once.
     */
    fun hand(served: ServedWaiters, o: Handed) {
        check(outcome == null) { "waiter handed twice" }
        outcome = o
        val s = SLOT.getAndSet(this, HANDED)
        if (s is CancellableContinuation<*>) {
            @Suppress("UNCHECKED_CAST")
            val c = s as CancellableContinuation<Handed>
            if (served.inline) {
                parked = c
                served.add(this)
            } else {
                c.resume(o)
            }
        }
    }

    // The members below are for ServedWaiters, after hand queued this waiter; the queue's
    // happens-before orders hand's writes before their reads.

    /** The context of the suspended checkout. */
    val context: CoroutineContext get() = parked!!.context

    /**
     * The dispatcher to resume the suspended checkout on, or null when it needs none (or is not a
     * [CoroutineDispatcher]), or when the checkout was cancelled (resuming it is then a no-op, and
     * its dispatcher may be gone, e.g. a finished runBlocking).
     */
    fun dispatcherToResumeOn(): CoroutineDispatcher? {
        val c = parked!!
        if (c.isCancelled) return null
        val d = interceptor as? CoroutineDispatcher ?: return null
        return if (d.isDispatchNeeded(c.context)) d else null
    }

    /**
     * The event loop of [dispatcher] that owns the socket of the connection this waiter was handed,
     * when that is not the current thread's loop; null otherwise (no connection, no home loop, or
     * already there).
     */
    fun homeLoopElsewhere(dispatcher: CoroutineDispatcher): EventLoop? {
        val home = handedHome() ?: return null
        return if (home.group === dispatcher && !home.inLoop()) home else null
    }

    /**
     * Under the pool's lock, once handed while suspended: the event loop that owns the socket of the
     * connection this waiter was handed, when the suspended checkout's dispatcher is that loop's
     * group (its [ServedWaiters] lane); null otherwise.
     */
    fun homeLoopOfHanded(): EventLoop? {
        val home = handedHome() ?: return null
        return if (parked != null && interceptor === home.group) home else null
    }

    /** The home loop of the connection this waiter was handed, if it was handed one bound to a loop. */
    private fun handedHome(): EventLoop? = ((outcome as? PooledConnection)?.raw as? LoopBound)?.homeLoop

    /** Runs the suspended checkout on this thread, which belongs to [dispatcher] (its own); a no-op if it was cancelled. */
    @OptIn(ExperimentalCoroutinesApi::class)
    fun resumeHere(dispatcher: CoroutineDispatcher) {
        val c = parked!!
        parked = null
        with(c) { dispatcher.resumeUndispatched(outcome!!) }
    }

    /** Resumes the suspended checkout through its dispatcher; a no-op if it was cancelled. */
    fun resumeDispatched() {
        val c = parked!!
        parked = null
        c.resume(outcome!!)
    }

    /**
     * Suspends until an outcome is handed and returns it (at once when it already was). Cancellable:
     * a cancelled caller gets CancellationException, and must then give back whatever [outcome]
     * holds (the hand-over may have raced with the cancellation).
     */
    suspend fun awaitOutcome(): Handed {
        if (slot === HANDED) return outcomeAfterHand()
        return suspendCancellableCoroutine { cont ->
            interceptor = cont.context[ContinuationInterceptor]
            if (!SLOT.compareAndSet(this, null, cont)) cont.resume(outcomeAfterHand())
        }
    }

    // The CAS/getAndSet on slot orders the write of outcome before this read.
    private fun outcomeAfterHand(): Handed = outcome!!

    private companion object {
        // @JvmField: static final fields the JIT folds (a getter through the companion left a
        // class check on every hand-over in the profile)
        @JvmField val HANDED = Any()

        @JvmField val SLOT: AtomicReferenceFieldUpdater<Waiter, Any?> =
            AtomicReferenceFieldUpdater.newUpdater(Waiter::class.java, Any::class.java, "slot")
    }
}
