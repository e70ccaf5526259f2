package dev.mooring.cmap.internal.connection

import io.ktor.network.selector.ClosedChannelCancellationException
import io.ktor.network.selector.SelectInterest
import io.ktor.network.selector.Selectable
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.Job
import kotlin.coroutines.resume
import java.io.IOException
import java.nio.channels.CancelledKeyException
import java.nio.channels.ClosedSelectorException
import java.nio.channels.SelectionKey
import java.nio.channels.Selector
import java.util.ArrayDeque
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean
import java.util.function.Consumer
import kotlin.coroutines.ContinuationInterceptor

/**
 * One thread of an [EventLoopGroup]: a NIO [Selector] and a task queue, served in turn.
 *
 * Each turn runs the tasks dispatched to this loop, applies the interests published since the
 * last turn ([publish]) to this loop's selector, then selects (blocking only when there is
 * nothing to run) and resumes the coroutines whose sockets became ready. A coroutine whose
 * dispatcher is this loop's group is resumed right here, on this thread, without a dispatch:
 * the reply it waited for is read and decoded, and its next request written, on the thread that
 * saw the socket become ready. Coroutines of other dispatchers are resumed through them.
 *
 * Thread-safe: [execute] and [publish] may be called from any thread; from another thread they
 * wake the selector when it is blocked (a Dekker handshake on [selecting] and the queues, so a
 * task is never left waiting in the queue of a loop blocked in select). [close] stops the loop
 * after its current turn; the suspensions still registered with it fail with
 * [ClosedChannelCancellationException], and tasks dispatched afterwards go to [rejected].
 */
internal class EventLoop(
    val group: EventLoopGroup,
    name: String,
    private val rejected: (Runnable) -> Unit,
    /** Null except in tests. */
    private val probe: EventLoopProbe? = null,
) {
    private val selector: Selector = group.provider.openSelector()
    private val tasks = ConcurrentLinkedQueue<Runnable>()
    private val remoteInterests = ConcurrentLinkedQueue<Selectable>()
    private val localInterests = ArrayDeque<Selectable>() // loop thread only

    /** True from just before the loop checks its queues for the last time before select until select returns. */
    @Volatile private var selecting = false
    private val wakeupPending = AtomicBoolean(false)

    @Volatile private var closing = false

    /** Completes when the thread has left its loop and closed the selector. */
    val stopped: CompletableJob = Job()

    val thread: Thread = EventLoopThread(this, name)

    fun start() = thread.start()

    fun inLoop(): Boolean = Thread.currentThread() === thread

    /** Runs [task] on this loop's thread, in its next turn. */
    fun execute(task: Runnable) {
        tasks.add(task)
        if (closing) return drainRejected()
        if (!inLoop()) wakeup()
    }

    /** Applies [selectable]'s current interests to this loop's selector before its next select. */
    fun publish(selectable: Selectable) {
        if (inLoop()) {
            localInterests.add(selectable)
            return
        }
        remoteInterests.add(selectable)
        if (closing) {
            cancelRemoteInterests()
            return
        }
        wakeup()
    }

    /**
     * True when this loop's selector already watches [selectable] for [interest] (its key is
     * valid and has the interest), so a waiter just added to its suspensions needs no [publish]:
     * no wake-up of a loop blocked in select. Any thread; call it after adding the waiter. Safe
     * against the loop dropping the interest meanwhile: [processReadyKey] looks for a reader
     * again after it drops the read interest, so a waiter that saw the interest still set either
     * is found there or sees it gone and publishes (the key's interest set and the suspensions
     * are both volatile).
     */
    fun watches(selectable: Selectable, interest: SelectInterest): Boolean {
        val key = selectable.channel.keyFor(selector) ?: return false
        return try {
            key.isValid && key.interestOps() and interest.flag != 0
        } catch (_: CancelledKeyException) {
            false
        }
    }

    /** Stops tracking [selectable] on this loop (its channel was closed); wakes the loop so the key goes at once. */
    fun forget(selectable: Selectable) {
        val key = selectable.channel.keyFor(selector) ?: return
        key.cancel()
        if (!inLoop()) wakeup()
    }

    fun close() {
        closing = true
        try {
            selector.wakeup()
        } catch (_: ClosedSelectorException) {
        }
    }

    /** Wakes this loop if it is blocked in select, unless called from its own thread (which selects next anyway). */
    fun wakeupFromOutside() {
        if (!inLoop()) wakeup()
    }

    private fun wakeup() {
        if (selecting && wakeupPending.compareAndSet(false, true)) selector.wakeup()
    }

    internal fun run() {
        try {
            while (!closing) {
                runTasks()
                applyInterests()
                selecting = true
                // The ready keys are handled inside select ([onReady]): no selected-key set, whose
                // entry and iterator cost 60 bytes per wake-up.
                if (tasks.isEmpty() && remoteInterests.isEmpty() && localInterests.isEmpty() && !closing) {
                    selector.select(onReady)
                } else {
                    selector.selectNow(onReady)
                }
                selecting = false
                probe?.selectReturned()
                wakeupPending.set(false)
            }
        } catch (t: Throwable) {
            closing = true
            failAll(t)
            throw t
        } finally {
            closing = true
            shutdown()
        }
    }

    /** Keys of this loop's selector, cancelled ones not yet deregistered included (a racy read, for tests). */
    val registeredKeys: Int get() = selector.keys().size

    /** Runs queued tasks, at most [MAX_TASKS_PER_TURN] (so tasks that queue tasks cannot starve the sockets). */
    private fun runTasks() {
        var n = MAX_TASKS_PER_TURN
        while (n-- > 0) {
            val task = tasks.poll() ?: return
            probe?.taskRun()
            runSafely(task)
        }
    }

    private fun applyInterests() {
        while (true) apply(localInterests.pollFirst() ?: break)
        while (true) apply(remoteInterests.poll() ?: break)
    }

    private fun apply(selectable: Selectable) {
        val channel = selectable.channel
        try {
            if (selectable.isClosed) throw ClosedChannelCancellationException()
            val ops = selectable.interestedOps
            val key = channel.keyFor(selector)
            if (key == null || !key.isValid) {
                if (ops != 0) channel.register(selector, ops, selectable)
            } else if (key.interestOps() != ops) {
                key.interestOps(ops)
            }
        } catch (t: Throwable) {
            channel.keyFor(selector)?.cancel()
            failSuspensions(selectable, if (t is CancellationException) t else ClosedChannelCancellationException())
        }
    }

    /** Handles each ready key during select (one object for the loop's life). */
    private val onReady = Consumer<SelectionKey> { key -> processReadyKey(key) }

    private fun processReadyKey(key: SelectionKey) {
        val selectable = key.attachment() as? Selectable
        if (selectable == null) {
            key.cancel()
            return
        }
        try {
            val ready = key.readyOps()
            // Level-triggered, so a ready interest nobody waits for must stop. Read interest
            // stays while a reader was waiting: the reader usually asks again (the next reply)
            // before this loop selects again, and keeping it saves two epoll_ctl calls per reply.
            // It is cleared at the first readiness that finds
            // no reader (data or end of stream nobody waits for: one extra wake-up at most).
            // Write and connect readiness is nearly always there: cleared at once. Cleared
            // before resuming, so a waiter that asks again in there is not undone.
            var reader = if (ready and SelectionKey.OP_READ != 0) selectable.suspensions.removeSuspension(SelectInterest.READ) else null
            val stop = if (reader == null) ready else ready and SelectionKey.OP_READ.inv()
            if (stop != 0) key.interestOps(key.interestOps() and stop.inv())
            // A reader that came after the first look may have seen the read interest still set and
            // not published itself ([watches]): it is found here, after the interest is gone.
            if (reader == null && ready and SelectionKey.OP_READ != 0) reader = selectable.suspensions.removeSuspension(SelectInterest.READ)
            if (reader != null) resumeHere(reader)
            val others = ready and SelectionKey.OP_READ.inv()
            if (others != 0) selectable.suspensions.invokeForEachPresent(others) { resumeHere(this) }
        } catch (_: CancelledKeyException) {
            // closed while its turn came (by a coroutine resumed just before): its waiters were failed by notifyClosed
            failSuspensions(selectable, ClosedChannelCancellationException())
        }
    }

    /** Resumes [c] on this thread when its dispatcher is this group (no dispatch); otherwise through its dispatcher. */
    @OptIn(ExperimentalCoroutinesApi::class)
    private fun resumeHere(c: CancellableContinuation<Unit>) {
        val d = c.context[ContinuationInterceptor]
        if (d === group) {
            with(c) { (d as CoroutineDispatcher).resumeUndispatched(Unit) }
        } else {
            c.resume(Unit)
        }
    }

    private fun runSafely(task: Runnable) {
        try {
            task.run()
        } catch (t: Throwable) {
            // A coroutine's own failure is handled inside it; anything escaping is a bug in a task.
            Thread.currentThread().uncaughtExceptionHandler?.uncaughtException(Thread.currentThread(), t)
        }
    }

    private fun failSuspensions(selectable: Selectable, cause: Throwable) {
        selectable.suspensions.invokeForEachPresent { _ -> resumeWith(Result.failure(cause)) }
    }

    private fun failAll(cause: Throwable) {
        try {
            for (key in selector.keys()) {
                (key.attachment() as? Selectable)?.let { failSuspensions(it, ClosedChannelCancellationException().apply { initCause(cause) }) }
            }
        } catch (_: ClosedSelectorException) {
        }
    }

    private fun cancelRemoteInterests() {
        while (true) {
            val s = remoteInterests.poll() ?: break
            failSuspensions(s, ClosedChannelCancellationException())
        }
    }

    private fun drainRejected() {
        if (!stopped.isCompleted) return // the loop drains its queue itself when it stops
        while (true) rejected(tasks.poll() ?: break)
    }

    /** After the last turn: fail every waiter, run what is queued, close the selector. */
    private fun shutdown() {
        try {
            for (key in selector.keys()) {
                (key.attachment() as? Selectable)?.let { failSuspensions(it, ClosedChannelCancellationException()) }
                key.cancel()
            }
        } catch (_: ClosedSelectorException) {
        }
        cancelRemoteInterests()
        localInterests.forEach { failSuspensions(it, ClosedChannelCancellationException()) }
        localInterests.clear()
        // The tasks queued until now run here (resumed coroutines see their sockets closed).
        var rounds = 0
        while (tasks.isNotEmpty() && rounds++ < MAX_SHUTDOWN_ROUNDS) runTasks()
        try {
            selector.close()
        } catch (_: IOException) {
        }
        stopped.complete()
        // Anything that raced in after the last round goes to the fallback.
        while (true) rejected(tasks.poll() ?: break)
    }

    private companion object {
        const val MAX_SHUTDOWN_ROUNDS = 1_000
        const val MAX_TASKS_PER_TURN = 1_024
    }
}

/** The thread of an [EventLoop]; lets the group find the loop of the current thread without a lookup. */
internal class EventLoopThread(val loop: EventLoop, name: String) : Thread(name) {
    init {
        isDaemon = true
    }

    override fun run() = loop.run()
}

private typealias CancellationException = kotlinx.coroutines.CancellationException
