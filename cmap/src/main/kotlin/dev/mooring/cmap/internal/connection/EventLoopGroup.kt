package dev.mooring.cmap.internal.connection

import io.ktor.network.selector.ClosedChannelCancellationException
import io.ktor.network.selector.SelectInterest
import io.ktor.network.selector.Selectable
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancel
import kotlinx.coroutines.suspendCancellableCoroutine
import java.io.IOException
import java.nio.channels.spi.SelectorProvider
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext

/**
 * The event loops of one connection factory: [size] daemon threads (`mooring-loop-N-i`), each an
 * [EventLoop] with a selector of its own. The group is both
 *
 * - the Ktor [SelectorManager] of the factory's sockets: each socket belongs to one loop (its
 *   home, chosen by the socket's identity), where whoever waits for it is registered and
 *   resumed, and
 * - a [CoroutineDispatcher] for the coroutines that want to run on those loops (public as
 *   `DefaultConnectionFactory.dispatcher` and `MongoCluster.dispatcher`). A coroutine of this
 *   dispatcher that waits for a socket is resumed directly by the loop that sees the socket
 *   become ready, on that loop's thread, without a dispatch: one thread reads the reply,
 *   decodes it, hands the connection to the pool's next waiter and writes that waiter's request.
 *   A dispatch goes to the coroutine's own loop (see [dispatch]).
 *
 * Code running on this dispatcher must not block its thread: the thread is a selector's.
 *
 * Thread-safe. [close] stops every loop (sockets still registered fail their waiters with
 * [ClosedChannelCancellationException]); [job] completes once every thread has stopped. A task
 * dispatched after [close] cancels its coroutine's job and runs on [Dispatchers.IO], as
 * kotlinx.coroutines does for a closed executor.
 */
internal class EventLoopGroup(
    size: Int,
    /** Told of each loop's turns; null (production) except in tests. */
    probe: EventLoopProbe? = null,
) : CoroutineDispatcher(), SelectorManager {
    init {
        require(size >= 1) { "an event loop group needs at least one loop, was $size" }
    }

    override val provider: SelectorProvider = SelectorProvider.provider()

    /** Completes when every loop's thread has stopped. */
    val job: CompletableJob = Job()

    override val coroutineContext: CoroutineContext = this + job

    private val closed = AtomicBoolean(false)
    private val next = AtomicInteger()
    private val id = ids.incrementAndGet()
    private val loops: Array<EventLoop> = Array(size) { i -> EventLoop(this, "mooring-loop-$id-$i", ::rejected, probe) }

    init {
        val running = AtomicInteger(size)
        for (loop in loops) {
            loop.stopped.invokeOnCompletion { if (running.decrementAndGet() == 0) job.complete() }
            loop.start()
        }
    }

    val size: Int get() = loops.size

    /** The loop at [index] (for tests). */
    fun loopAt(index: Int): EventLoop = loops[index]

    /** The loops' threads (for tests). */
    fun threads(): List<Thread> = loops.map { it.thread }

    private fun nextLoop(): EventLoop = loops[(next.getAndIncrement() and Int.MAX_VALUE) % loops.size]

    /** The loop [selectable] belongs to: its waiters are registered and resumed there. */
    fun homeOf(selectable: Selectable): EventLoop = loops[(System.identityHashCode(selectable) and Int.MAX_VALUE) % loops.size]

    private fun homeOfJob(job: Job): EventLoop = loops[(System.identityHashCode(job) and Int.MAX_VALUE) % loops.size]


    /**
     * A dispatch goes to the coroutine's own loop (by its [Job]; in turn when it has none), from
     * a loop thread too, so a coroutine keeps to one loop between its replies. Replies never
     * dispatch (see [EventLoop]).
     */
    override fun dispatch(context: CoroutineContext, block: Runnable) {
        val job = context[Job]
        dispatchOn(if (job != null) homeOfJob(job) else nextLoop(), context, block)
    }

    /** [dispatch] to [loop], one of this group's, instead of the coroutine's own loop (the same after [close]). */
    fun dispatchOn(loop: EventLoop, context: CoroutineContext, block: Runnable) {
        if (closed.get()) {
            context.cancel(kotlinx.coroutines.CancellationException("Mooring's event loops are closed"))
            Dispatchers.IO.dispatch(context, block)
            return
        }
        loop.execute(block)
    }

    private fun rejected(task: Runnable) {
        Dispatchers.IO.dispatch(kotlin.coroutines.EmptyCoroutineContext, task)
    }

    override suspend fun select(selectable: Selectable, interest: SelectInterest) {
        if (selectable.isClosed) throw IOException("the socket is closed")
        check(selectable.interestedOps and interest.flag != 0) { "the socket is not interested in $interest" }
        // A socket belongs to one loop, as a Netty channel does: its waiter is registered there and
        // resumed there. Waiters then follow their connections, whose homes are fixed and spread
        // over the loops; registering on the current loop instead let one loop collect the callers
        // (a served pool waiter runs on the loop that checked the connection in, then stayed).
        val loop = homeOf(selectable)
        suspendCancellableCoroutine<Unit> { c ->
            selectable.suspensions.addSuspension(interest, c)
            // Read interest usually stays registered between replies (see EventLoop.processReadyKey):
            // then the loop already watches for this reply and publishing would only wake it.
            if (!c.isCancelled && !loop.watches(selectable, interest)) loop.publish(selectable)
        }
    }

    override fun notifyClosed(selectable: Selectable) {
        selectable.suspensions.invokeForEachPresent { _ -> resumeWith(Result.failure(ClosedChannelCancellationException())) }
        for (loop in loops) loop.forget(selectable)
    }

    /**
     * Makes every loop blocked in select return and select again, so that keys cancelled behind
     * its back are deregistered now. A channel registered with a selector is only closed (its file
     * descriptor released, the peer told) when its key is deregistered, at a loop's next select;
     * Ktor closes a socket whose connect failed or was cancelled without [notifyClosed], so
     * without this its socket stayed open, connecting, until the loop happened to wake for
     * something else (on an idle client: never). Non-blocking; any thread.
     */
    fun deregisterCancelledKeys() {
        for (loop in loops) loop.wakeupFromOutside()
    }

    /** Stops every loop; idempotent and non-blocking ([job] completes when the threads have stopped). */
    override fun close() {
        if (closed.compareAndSet(false, true)) loops.forEach { it.close() }
    }

    override fun toString(): String = "Mooring event loops $id ($size threads)"

    private companion object {
        val ids = AtomicInteger()
    }
}
