package dev.mooring.java.internal

import dev.mooring.events.ChangingEventListener
import dev.mooring.events.MooringEvent
import dev.mooring.java.ListenerRegistration
import org.slf4j.LoggerFactory
import java.util.concurrent.CopyOnWriteArrayList

/**
 * The one [EventListener] a facade registers on its cluster's bus; it calls every registered
 * adapter in registration order. Events of one cluster come from several threads at once (each
 * pool, each monitor, the topology), so delivery is serialized under [deliveryLock]: one event
 * at a time reaches all adapters, and every listener and publisher subscriber of the cluster
 * sees the same total order (the order events entered the dispatcher; per publisher, the
 * order they were published in). The lock is taken last (publishers hold only coroutine
 * mutexes, which block no thread) and held only while listeners run, which must be quick and
 * must not wait on the cluster. A throwing adapter is logged and skipped, never propagated to
 * the publisher (the pool or a monitor). Thread-safe (copy-on-write list: registrations are
 * rare, events frequent).
 *
 * Its [eventTypes] are the union of its adapters' (null when one takes every event), and the bus
 * reads them again at each change ([ChangingEventListener]): a service with only a
 * [dev.mooring.java.ConnectionPoolListener] has no command events built for it.
 */
internal class ListenerDispatcher : ChangingEventListener() {
    private val adapters = CopyOnWriteArrayList<ListenerAdapter>()

    @Volatile override var eventTypes: Set<Class<out MooringEvent>>? = emptySet()
        private set

    /** Recomputes [eventTypes] from the adapters and tells the bus. */
    private fun adaptersChanged() {
        synchronized(adapters) {
            var union: MutableSet<Class<out MooringEvent>>? = HashSet()
            for (a in adapters) {
                val t = a.eventTypes
                if (t == null) {
                    union = null
                    break
                }
                union!!.addAll(t)
            }
            eventTypes = union
            eventTypesChanged()
        }
    }

    private val deliveryLock = Any()

    override fun onEvent(event: MooringEvent) {
        if (adapters.isEmpty()) return
        synchronized(deliveryLock) {
            for (a in adapters) {
                try {
                    a.onEvent(event)
                } catch (t: Throwable) {
                    log.warn("listener {} threw on {}; ignored (the other listeners still got the event)", a, event::class.simpleName, t)
                }
            }
        }
    }

    fun add(adapter: ListenerAdapter): ListenerRegistration {
        adapters.add(adapter)
        adaptersChanged()
        return object : ListenerRegistration {
            override fun close() {
                if (adapters.remove(adapter)) adaptersChanged()
            }
            override fun toString(): String = "ListenerRegistration($adapter)"
        }
    }

    /** Removes every registration of [target]; true when there was one. */
    fun remove(target: Any): Boolean = adapters.removeIf { it.isFor(target) }.also { if (it) adaptersChanged() }

    fun clear() {
        adapters.clear()
        adaptersChanged()
    }

    override fun toString(): String = "JavaListenerDispatcher(${adapters.size} listeners)"

    private companion object {
        private val log = LoggerFactory.getLogger(ListenerDispatcher::class.java)
    }
}
