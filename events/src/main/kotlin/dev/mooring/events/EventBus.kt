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
 *   order, and see every event of the types they want ([EventListener.eventTypes], by default
 *   every event). A listener that throws is logged and skipped; it never breaks the
 *   publisher. Listeners must be quick and must not call back into the pool.
 * - **Interest** ([interest]): a publisher asks once for the interest in one event type and
 *   then checks [EventInterest.isActive] (a volatile read or two) before it builds such an
 *   event, so events nobody wants cost nothing (e.g. command events when the only listener
 *   wants pool events).
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
    private val listeners = CopyOnWriteArrayList<Registered>()

    /** Every interest handed out by [interest]; recomputed when a listener is added or removed. */
    private val interests = CopyOnWriteArrayList<EventInterest>()
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
        val registered = Registered(listener, listener.eventTypes?.toTypedArray())
        synchronized(interests) {
            listeners.add(registered)
            refreshInterests()
            if (listener is ChangingEventListener) listener.attached(this)
        }
        return AutoCloseable {
            synchronized(interests) {
                listeners.remove(registered)
                refreshInterests()
                if (listener is ChangingEventListener && listeners.none { it.listener === listener }) listener.detached(this)
            }
        }
    }

    /** [ChangingEventListener.eventTypesChanged]: reads [listener]'s types again, then every interest. */
    internal fun reread(listener: ChangingEventListener) {
        synchronized(interests) {
            val types = listener.eventTypes?.toTypedArray()
            for (r in listeners) if (r.listener === listener) r.types = types
            refreshInterests()
        }
    }

    /**
     * The interest in events of [type] (a [MooringEvent] type or a supertype of several): active
     * while a flow collector is active or a listener wants such events (every event, [type] or a
     * super- or subtype of it). Ask once and keep the handle; [EventInterest.isActive] is cheap.
     */
    public fun interest(type: Class<out MooringEvent>): EventInterest =
        synchronized(interests) {
            interests.firstOrNull { it.type == type } ?: EventInterest(type, collectors).also {
                it.listenersWant = listeners.any { r -> r.wants(type) }
                interests.add(it)
            }
        }

    /** Recomputes every interest after a listener change (under the lock of [interests]). */
    private fun refreshInterests() {
        for (i in interests) i.listenersWant = listeners.any { it.wants(i.type) }
    }

    /** Publishes [event] to listeners, then to flow collectors. Never suspends. */
    public fun publish(event: MooringEvent) {
        for (r in listeners) {
            if (!r.accepts(event)) continue
            try {
                r.listener.onEvent(event)
            } catch (t: Throwable) {
                log.warn("event listener {} threw on {}; the event was still delivered to the others", r.listener, event::class.simpleName, t)
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

/**
 * A listener as registered: [types] is its [EventListener.eventTypes] read at registration (null:
 * every event), and again at each [ChangingEventListener.eventTypesChanged].
 */
private class Registered(val listener: EventListener, @Volatile var types: Array<Class<out MooringEvent>>?) {
    fun accepts(event: MooringEvent): Boolean {
        val t = types ?: return true
        for (c in t) if (c.isInstance(event)) return true
        return false
    }

    /** True when this listener may receive events of [type] (or of its subtypes). */
    fun wants(type: Class<out MooringEvent>): Boolean {
        val t = types ?: return true
        return t.any { it.isAssignableFrom(type) || type.isAssignableFrom(it) }
    }
}

/**
 * A synchronous event callback; see [EventBus.addListener].
 *
 * ```
 * val poolOnly = EventListener.of(ConnectionPoolEvent::class.java) { e -> println(e) }
 * ```
 */
public fun interface EventListener {
    /** Called inside the publisher, in publication order. Must be quick and must not throw. */
    public fun onEvent(event: MooringEvent)

    /**
     * The event types this listener wants (it receives the events that are instances of one of
     * them), or null for every event (the default). Read once, when the listener is added (and
     * again whenever a [ChangingEventListener] says it changed).
     * Declaring it lets publishers skip building events nobody wants (see [EventBus.interest]).
     */
    public val eventTypes: Set<Class<out MooringEvent>>? get() = null

    public companion object {
        /** A listener that receives only the events that are instances of one of [types], passed to [listener]. */
        @JvmStatic
        public fun of(vararg types: Class<out MooringEvent>, listener: EventListener): EventListener {
            val wanted = types.toSet()
            return object : EventListener {
                override fun onEvent(event: MooringEvent) = listener.onEvent(event)
                override val eventTypes: Set<Class<out MooringEvent>> get() = wanted
                override fun toString(): String = "EventListener.of($wanted, $listener)"
            }
        }
    }
}

/**
 * The interest in one event type on one [EventBus] (see [EventBus.interest]). Thread-safe:
 * [isActive] may be read from any thread; it follows listener changes and flow collectors.
 */
public class EventInterest internal constructor(
    /** The event type this interest is about. */
    public val type: Class<out MooringEvent>,
    private val collectors: AtomicInteger,
) {
    @Volatile internal var listenersWant: Boolean = false

    /** True when an event of [type] published now would reach a listener or a flow collector. */
    public val isActive: Boolean get() = listenersWant || collectors.get() > 0
}

/** Published on [EventBus.events] after a slow collector missed [count] events. */
public data class EventsDropped(
    /** How many events were missed since the last report. */
    val count: Long,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : MooringEvent
