package dev.mooring.java.internal

import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.java.ListenerRegistration
import org.slf4j.LoggerFactory
import java.util.concurrent.CopyOnWriteArrayList

/**
 * The one [EventListener] a facade registers on its cluster's bus; it calls every registered
 * adapter in registration order, so each sees the events in publication order. A throwing
 * adapter is logged and skipped, never propagated to the publisher (the pool or a monitor).
 * Thread-safe (copy-on-write list: registrations are rare, events frequent).
 */
internal class ListenerDispatcher : EventListener {
    private val adapters = CopyOnWriteArrayList<ListenerAdapter>()

    override fun onEvent(event: MooringEvent) {
        for (a in adapters) {
            try {
                a.onEvent(event)
            } catch (t: Throwable) {
                log.warn("listener {} threw on {}; ignored (the other listeners still got the event)", a, event::class.simpleName, t)
            }
        }
    }

    fun add(adapter: ListenerAdapter): ListenerRegistration {
        adapters.add(adapter)
        return object : ListenerRegistration {
            override fun close() {
                adapters.remove(adapter)
            }
            override fun toString(): String = "ListenerRegistration(${adapter.target})"
        }
    }

    /** Removes every registration of [target]; true when there was one. */
    fun remove(target: Any): Boolean = adapters.removeIf { it.target === target }

    fun clear() = adapters.clear()

    override fun toString(): String = "JavaListenerDispatcher(${adapters.size} listeners)"

    private companion object {
        private val log = LoggerFactory.getLogger(ListenerDispatcher::class.java)
    }
}
