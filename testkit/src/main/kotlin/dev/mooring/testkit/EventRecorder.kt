package dev.mooring.testkit

import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import java.util.Collections

/**
 * Records every event it is given, as a synchronous listener (nothing is dropped). Thread-safe:
 * events may arrive from any thread; [events] is a snapshot.
 */
class EventRecorder : EventListener {
    private val list = Collections.synchronizedList(ArrayList<MooringEvent>())

    override fun onEvent(event: MooringEvent) {
        list.add(event)
    }

    /** A snapshot of the events so far. */
    val events: List<MooringEvent> get() = synchronized(list) { list.toList() }

    /** The events so far of type [T]. */
    inline fun <reified T : MooringEvent> ofType(): List<T> = events.filterIsInstance<T>()

    /** Forgets the events so far. */
    fun clear() = list.clear()
}
