package dev.mooring.events

import java.util.concurrent.CopyOnWriteArrayList

/**
 * An [EventListener] whose [eventTypes] change while it is registered: typically one that fans
 * events out to listeners added and removed later (the Java facade's dispatcher is one). After
 * what [eventTypes] returns has changed, call [eventTypesChanged]: every [EventBus] this listener
 * is registered on reads it again, so publishers go back to building only the events someone
 * wants ([EventBus.interest]).
 *
 * Concurrency: [eventTypesChanged] may be called from any thread. Events published after it
 * returns are filtered by the new types; an event published while it runs may be filtered by
 * either. [eventTypes] must be cheap and must not call into the bus. Once the listener's
 * registration is closed, the bus no longer reads it.
 */
public abstract class ChangingEventListener : EventListener {
    private val buses = CopyOnWriteArrayList<EventBus>()

    /** Makes every bus this listener is registered on read [eventTypes] again. */
    protected fun eventTypesChanged() {
        for (bus in buses) bus.reread(this)
    }

    internal fun attached(bus: EventBus) {
        buses.addIfAbsent(bus)
    }

    internal fun detached(bus: EventBus) {
        buses.remove(bus)
    }
}
