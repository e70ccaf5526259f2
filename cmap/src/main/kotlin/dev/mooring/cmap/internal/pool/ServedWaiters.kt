package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.internal.connection.EventLoop
import kotlinx.coroutines.CoroutineDispatcher
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * The waiters the pool served while they were suspended, in the order they were served, and the
 * way they are resumed so that they also **run** in that order.
 *
 * A waiter served under the pool's lock ([Waiter.hand]) is not resumed there: it is added here
 * (under the lock, so each lane's order below is the hand-over order, FIFO), and whoever released
 * the lock then drains the lanes oldest first ([runAfterUnlock]) on its own thread. One thread
 * drains a lane at a time (a waiter added while another thread drains it is left to that thread),
 * so the waiters of a lane run exactly in its order:
 *
 * - a waiter whose dispatcher is the draining coroutine's runs at once on this thread, without a
 *   dispatch ([Waiter.resumeHere]: the thread already belongs to that dispatcher), until it
 *   suspends again; a hand-over it makes meanwhile (its own check-in) is only queued here and run
 *   next by this loop, never recursively;
 * - at a waiter of another dispatcher the loop stops, leaves that waiter at the head of the queue
 *   and dispatches a [Drain] task to its dispatcher, which continues the loop on one of that
 *   dispatcher's threads (a waiter that needs no dispatch, `Dispatchers.Unconfined`, or was
 *   cancelled, is simply resumed);
 * - the queue has one lane per event loop: a waiter whose dispatcher is an event loop group and
 *   that was handed a connection whose socket belongs to one of its loops
 *   ([dev.mooring.cmap.internal.connection.LoopBound]) joins that loop's lane, every other waiter
 *   the general lane. Each lane is run in its own order by one thread at a time, so a loop runs the
 *   waiters its own check-ins served while the other loop runs its own: with one queue for the
 *   pool, a loop that found the other one draining left its waiter to it, and the other loop then
 *   had to send it back as a task, a selector wake-up per hand-over. Between two loops, which
 *   run at the same time anyway, there is no run order to keep;
 * - a waiter of a lane drained on another thread of its dispatcher (its connection was checked in
 *   off its home loop) runs on its loop instead, as a task there ([ResumeAtHome]): it will write
 *   its request and wait for the reply on that socket, and a wait registered from another loop
 *   costs a selector wake-up and two `epoll_ctl` calls. Such waiters keep their hand-over order
 *   among themselves (the loop's task queue is FIFO);
 * - after [INLINE_BUDGET] waiters in a row ([DRAIN_TASK_BUDGET] in a [Drain] task) the loop also
 *   stops and continues from a [Drain] task on its own dispatcher, so one caller's check-in does
 *   not run other callers' code for long, and the dispatcher's other tasks get their turn.
 *
 * A waiter stays in this queue until it runs: a task only says "continue here", so the order does
 * not depend on when the scheduler gets to the task (a waiter carried inside a task did run late:
 * a worker runs the task it dispatched last first).
 *
 * The cost of the exact order: a waiter runs on the draining thread until it next suspends (for a
 * command: until its request is encoded and written), and meanwhile no other thread resumes this
 * pool's served waiters. Code there must not block its thread; a waiter that blocked waiting for
 * another served waiter of the same pool would wait forever. Several threads draining at once
 * (each taking the oldest) would not keep the run order: a thread preempted between taking a
 * waiter and running it lets the others run ahead.
 *
 * Resuming through the dispatcher instead (a plain [kotlinx.coroutines.CancellableContinuation.resume]
 * under the lock) keeps the hand-over FIFO but not the run order: `Dispatchers.Default` runs
 * the task a worker dispatched last first (its LIFO slot) and other workers steal. It also costs
 * a dispatch, and often an unpark of another worker, per hand-over. (The measurements behind
 * these choices are in bench/README, issue 20 parts 2, 6 and 8.)
 *
 * Thread-safe: [add] runs under the pool's lock; any thread may call [runAfterUnlock]. A waiter
 * cancelled after it was served is still taken from here (resuming it is a no-op); its outcome is
 * given back by its own `abandon`. With [inline] false (the Lincheck model check) [Waiter.hand]
 * resumes at once instead.
 */
internal class ServedWaiters {
    /** Waiters whose connection has no home loop of their own dispatcher (and all of them outside event loops). */
    private val general = Lane(null)

    /** One lane per event loop that owns sockets of this pool's connections; grown under the pool's lock. */
    @Volatile private var loopLanes: Array<Lane> = emptyArray()

    /** False only under the model check: see [PoolLock.modelChecking]. */
    @Volatile var inline: Boolean = true

    /** Under the pool's lock: [w] was handed its outcome while suspended. */
    fun add(w: Waiter) {
        val home = w.homeLoopOfHanded() ?: return general.queue.add(w)
        val lanes = loopLanes
        for (lane in lanes) if (lane.home === home) return lane.queue.add(w)
        val lane = Lane(home)
        lane.queue.add(w)
        loopLanes = lanes + lane
    }

    /** After releasing the pool's lock, in the releasing coroutine (whose context is [here]). */
    fun runAfterUnlock(here: CoroutineContext) {
        val lanes = loopLanes
        if (general.queue.isEmpty() && lanes.all { it.queue.isEmpty() }) return
        val d = here[ContinuationInterceptor] as? CoroutineDispatcher
        val dispatcher = if (d != null && d.isDispatchNeeded(here)) d else null
        // This thread's own lane first: its waiters were mostly served by this thread's check-ins.
        for (lane in lanes) if (lane.home!!.inLoop() && !lane.queue.isEmpty()) lane.drain(dispatcher, INLINE_BUDGET)
        if (!general.queue.isEmpty()) general.drain(dispatcher, INLINE_BUDGET)
        for (lane in lanes) if (!lane.home!!.inLoop() && !lane.queue.isEmpty()) lane.drain(dispatcher, INLINE_BUDGET)
    }

    /**
     * The served waiters of one [home] event loop (null: the general lane), in hand-over order, and
     * the one thread at a time that runs them (see the class comment).
     */
    private class Lane(val home: EventLoop?) {
        val queue = ServedQueue()
        private val draining = AtomicBoolean()

        /**
         * Resumes queued waiters oldest first on this thread, which belongs to [here] (null: to no
         * dispatcher a waiter can share); see the class comment.
         */
        fun drain(here: CoroutineDispatcher?, inlineBudget: Int) {
            val active = ACTIVE.get()
            if (this in active) return // an outer loop on this thread drains this lane and takes what was added since
            while (true) {
                // One thread drains a lane at a time, so its waiters run in its order exactly; a waiter
                // added while another thread drains is taken by that thread.
                if (!draining.compareAndSet(false, true)) return
                var continueOn: CoroutineDispatcher? = null
                var continueContext: CoroutineContext = EmptyCoroutineContext
                active.add(this)
                try {
                    var budget = inlineBudget
                    while (true) {
                        val w = queue.peek() ?: break
                        val d = w.dispatcherToResumeOn()
                        if (d == null) {
                            queue.poll()
                            w.resumeDispatched() // needs no dispatch (Unconfined), or its interceptor is no CoroutineDispatcher
                        } else if (d === here && budget > 0) {
                            queue.poll()
                            budget--
                            val home = w.homeLoopElsewhere(d)
                            if (home == null) w.resumeHere(d) else home.execute(ResumeAtHome(w, home, d))
                        } else {
                            // Another dispatcher's, or the budget is spent: the waiter stays at the head
                            // (it was only peeked) and a task on its own dispatcher continues from there.
                            continueContext = w.context
                            continueOn = d
                            break
                        }
                    }
                } finally {
                    active.remove(this)
                    draining.set(false)
                }
                if (continueOn != null) {
                    val task = Drain(this, continueOn)
                    // A loop's lane continues on its loop (the group would pick a loop by the waiter's job).
                    if (home != null && home.group === continueOn) {
                        home.group.dispatchOn(home, continueContext, task)
                    } else {
                        continueOn.dispatch(continueContext, task)
                    }
                    return
                }
                // A waiter added after the last poll, whose thread found this lane draining, is taken now.
                if (queue.isEmpty()) return
            }
        }
    }

    /**
     * Resumes [waiter] on [home], the event loop of the connection it was handed, so its request is
     * written and its reply awaited on the loop that owns the socket (no cross-loop registration,
     * no selector wake-up). Falls back to a plain resume if the loop has stopped meanwhile.
     */
    private class ResumeAtHome(
        private val waiter: Waiter,
        private val home: EventLoop,
        private val dispatcher: CoroutineDispatcher,
    ) : Runnable {
        override fun run() = if (home.inLoop()) waiter.resumeHere(dispatcher) else waiter.resumeDispatched()
    }

    /** Continues the drain on a thread of [dispatcher]. */
    private class Drain(private val lane: Lane, private val dispatcher: CoroutineDispatcher) : Runnable {
        override fun run() = lane.drain(dispatcher, DRAIN_TASK_BUDGET)
    }

    private companion object {
        /** Waiters a caller's check-in resumes on the caller's thread before it continues on a fresh task. */
        const val INLINE_BUDGET = 64

        /**
         * The same for a [Drain] task, which runs no caller's code of its own: larger, because each
         * new task costs a dispatch and, on `Dispatchers.Default`, the wake-up of another worker.
         */
        const val DRAIN_TASK_BUDGET = 1_024

        /** The lanes being drained on the current thread (nested drains of other lanes and pools are allowed). */
        val ACTIVE: ThreadLocal<ArrayList<Lane>> = ThreadLocal.withInitial { ArrayList(2) }
    }
}
