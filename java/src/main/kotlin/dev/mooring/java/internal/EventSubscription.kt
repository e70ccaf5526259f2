package dev.mooring.java.internal

import dev.mooring.events.EventListener
import dev.mooring.events.EventsDropped
import dev.mooring.events.MooringEvent
import org.slf4j.LoggerFactory
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.Executor
import java.util.concurrent.Flow
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

/**
 * One subscriber of the facade's event publisher. It is an [EventListener] (registered
 * synchronously at subscribe time, so no event published after `subscribe` returns is missed)
 * that queues events in a bounded buffer of [capacity]; a drain loop on [executor] delivers
 * them as the subscriber requests them. Every signal (onSubscribe, onNext, onError,
 * onComplete) goes through the drain loop, which runs on one thread at a time, so signals are
 * serialized as the Reactive Streams rules require.
 *
 * Overflow: a subscriber more than [capacity] events behind misses the events that do not fit;
 * they are counted and an [EventsDropped] is queued before the next event that fits (the same
 * policy as the event bus's flow), so a loss is never silent.
 */
internal class EventSubscription(
    private val subscriber: Flow.Subscriber<in MooringEvent>,
    private val capacity: Int,
    private val executor: Executor,
    private val unregister: (EventSubscription) -> Unit,
) : Flow.Subscription, EventListener {
    private val queue = ConcurrentLinkedQueue<MooringEvent>()
    private val queued = AtomicInteger()
    private val demand = AtomicLong()
    private val wip = AtomicInteger()
    private val dropped = AtomicLong()

    @Volatile private var subscribed = false
    @Volatile private var cancelled = false
    @Volatile private var completing = false
    @Volatile private var pendingError: Throwable? = null

    /** Called by the dispatcher, on the publisher's thread: queue and schedule, never block. */
    override fun onEvent(event: MooringEvent) {
        if (cancelled || completing) return
        if (queued.get() >= capacity) {
            dropped.incrementAndGet()
            return
        }
        val owed = dropped.getAndSet(0)
        if (owed > 0) enqueue(EventsDropped(owed))
        enqueue(event)
        schedule()
    }

    private fun enqueue(event: MooringEvent) {
        queued.incrementAndGet()
        queue.offer(event)
    }

    override fun request(n: Long) {
        if (cancelled) return
        if (n <= 0) {
            pendingError = IllegalArgumentException("Reactive Streams rule 3.9: request($n) must be positive")
        } else {
            demand.getAndUpdate { d -> if (Long.MAX_VALUE - d < n) Long.MAX_VALUE else d + n }
        }
        schedule()
    }

    override fun cancel() {
        if (cancelled) return
        cancelled = true
        unregister(this)
        schedule() // lets the drain loop clear the buffer
    }

    /** The cluster closed: deliver what is buffered (as demand allows), then onComplete. */
    fun complete() {
        completing = true
        schedule()
    }

    /** Starts the subscription: onSubscribe is signalled from the drain loop. */
    fun start() = schedule()

    private fun schedule() {
        if (wip.getAndIncrement() == 0) {
            try {
                executor.execute { drain() }
            } catch (t: Throwable) {
                wip.set(0)
                log.warn("could not schedule event delivery to {}", subscriber, t)
            }
        }
    }

    private fun drain() {
        var missed = 1
        while (true) {
            if (!subscribed && !cancelled) {
                subscribed = true
                if (!signal { subscriber.onSubscribe(this) }) return
            }
            if (cancelled) {
                queue.clear()
                queued.set(0)
            } else {
                pendingError?.let { err ->
                    terminate()
                    signal { subscriber.onError(err) }
                    return
                }
                val requested = demand.get()
                var emitted = 0L
                while (emitted != requested && !cancelled) {
                    val e = queue.poll() ?: break
                    queued.decrementAndGet()
                    if (!signal { subscriber.onNext(e) }) return
                    emitted++
                }
                if (emitted > 0 && requested != Long.MAX_VALUE) demand.addAndGet(-emitted)
                if (completing && !cancelled && queue.isEmpty()) {
                    terminate()
                    signal { subscriber.onComplete() }
                    return
                }
            }
            missed = wip.addAndGet(-missed)
            if (missed == 0) return
        }
    }

    private fun terminate() {
        cancelled = true
        unregister(this)
        queue.clear()
        queued.set(0)
    }

    /** Runs one signal; a subscriber that throws is cancelled (rule 2.13) and logged. */
    private inline fun signal(block: () -> Unit): Boolean = try {
        block()
        true
    } catch (t: Throwable) {
        log.warn("subscriber {} threw from a signal; its subscription is cancelled", subscriber, t)
        terminate()
        false
    }

    private companion object {
        private val log = LoggerFactory.getLogger(EventSubscription::class.java)
    }
}
