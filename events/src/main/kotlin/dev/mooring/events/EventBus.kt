package dev.mooring.events

import dev.mooring.events.internal.CountingSharedFlow
import kotlinx.coroutines.channels.BufferOverflow
import kotlinx.coroutines.flow.MutableSharedFlow
import kotlinx.coroutines.flow.SharedFlow
import org.slf4j.LoggerFactory
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong

/**
 * The event bus of one cluster (or one stand-alone pool).
 *
 * Delivery contract:
 * - [publish] never suspends and never blocks on a subscriber. Publishers (the pool, the
 *   monitors) call it at the point the spec says the event happens, often under their own
 *   lock, so the publication order is the order in which things happened.
 * - **Listeners** ([addListener]) are called synchronously, inside [publish], in publication
 *   order, and see every event. A listener that throws is logged and skipped; it never
 *   breaks the publisher. Listeners must be quick and must not call back into the pool.
 * - **The flow** ([events]) is a hot [SharedFlow] with a bounded buffer of [bufferCapacity]
 *   events per collector. Collectors see events in publication order. A collector that falls
 *   more than [bufferCapacity] events behind does not slow the pool: the events it could not
 *   take are counted in [droppedEvents] and an [EventsDropped] event is published as soon as
 *   the buffer has room again, so a loss is never silent. Spec runners and metrics that must
 *   see every event use listeners.
 *
 * Thread-safe. There is nothing to close: a bus simply stops receiving events when its
 * publishers close.
 */
public class EventBus(
    /** How many events a slow flow collector may fall behind before events are dropped for it. */
    public val bufferCapacity: Int = DEFAULT_BUFFER_CAPACITY,
) {
    private val flow = MutableSharedFlow<MooringEvent>(
        replay = 0,
        extraBufferCapacity = bufferCapacity,
        onBufferOverflow = BufferOverflow.SUSPEND,
    )
    private val listeners = CopyOnWriteArrayList<EventListener>()
    private val dropped = AtomicLong()
    private val pendingDropReport = AtomicLong()

    // Active collectors of [events]. Counted here because MutableSharedFlow.subscriptionCount.value
    // takes the flow's lock: read on every publication point (several per checkout), it cost more
    // than the rest of an uncontended checkout and check-in together.
    private val collectors = AtomicInteger()

    /** Every event, in publication order; see the class documentation for the overflow policy. */
    public val events: SharedFlow<MooringEvent> = CountingSharedFlow(flow, collectors)

    /** Total number of events that flow collectors missed because they fell behind. */
    public val droppedEvents: Long get() = dropped.get()

    /**
     * True when at least one listener is registered or a flow collector is active. Cheap (two
     * volatile reads, no lock): publishers check it before they build an event.
     */
    public val hasSubscribers: Boolean get() = listeners.isNotEmpty() || collectors.get() > 0

    /**
     * Registers [listener]; it receives every event published after this call, synchronously.
     * Close the returned handle to unregister (idempotent).
     */
    public fun addListener(listener: EventListener): AutoCloseable {
        listeners.add(listener)
        return AutoCloseable { listeners.remove(listener) }
    }

    /** Publishes [event] to listeners, then to flow collectors. Never suspends. */
    public fun publish(event: MooringEvent) {
        for (l in listeners) {
            try {
                l.onEvent(event)
            } catch (t: Throwable) {
                log.warn("event listener {} threw on {}; the event was still delivered to the others", l, event::class.simpleName, t)
            }
        }
        if (collectors.get() == 0) return
        val owed = pendingDropReport.get()
        if (owed > 0 && flow.tryEmit(EventsDropped(owed))) pendingDropReport.addAndGet(-owed)
        if (!flow.tryEmit(event)) {
            dropped.incrementAndGet()
            pendingDropReport.incrementAndGet()
        }
    }

    public companion object {
        /** Default per-collector buffer of [events]. */
        public const val DEFAULT_BUFFER_CAPACITY: Int = 8192
        private val log = LoggerFactory.getLogger(EventBus::class.java)
    }
}

/** A synchronous event callback; see [EventBus.addListener]. */
public fun interface EventListener {
    /** Called inside the publisher, in publication order. Must be quick and must not throw. */
    public fun onEvent(event: MooringEvent)
}

/** Published on [EventBus.events] after a slow collector missed [count] events. */
public data class EventsDropped(
    /** How many events were missed since the last report. */
    val count: Long,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : MooringEvent
