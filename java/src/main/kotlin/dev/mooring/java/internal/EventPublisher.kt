package dev.mooring.java.internal

import dev.mooring.events.MooringEvent
import dev.mooring.java.ListenerRegistration
import java.util.concurrent.Executor
import java.util.concurrent.Flow
import java.util.concurrent.atomic.AtomicBoolean

/**
 * The facade's [Flow.Publisher] of every event of one cluster. Each subscription registers a
 * listener on [dispatcher] at `subscribe` time and sees every event published after that, in
 * publication order, within its buffer ([capacity]); see [EventSubscription]. [completeAll]
 * (called when the cluster has closed) completes every subscription after its buffered events;
 * a subscription made after that completes at once.
 */
internal class EventPublisher(
    private val dispatcher: ListenerDispatcher,
    private val executor: Executor,
    private val capacity: Int,
) : Flow.Publisher<MooringEvent> {
    private val lock = Any()
    private val subscriptions = LinkedHashMap<EventSubscription, ListenerRegistration>()
    private val completed = AtomicBoolean()

    override fun subscribe(subscriber: Flow.Subscriber<in MooringEvent>?) {
        if (subscriber == null) throw NullPointerException("Reactive Streams rule 1.9: subscriber must not be null")
        subscriber.let { s ->
            val sub = EventSubscription(s, capacity, executor) { remove(it) }
            synchronized(lock) {
                if (!completed.get()) subscriptions[sub] = dispatcher.add(ListenerAdapter(sub, null, sub::onEvent))
            }
            sub.start()
            if (completed.get()) sub.complete()
        }
    }

    private fun remove(sub: EventSubscription) {
        synchronized(lock) { subscriptions.remove(sub) }?.close()
    }

    fun completeAll() {
        val subs = synchronized(lock) {
            completed.set(true)
            subscriptions.keys.toList()
        }
        subs.forEach { it.complete() }
    }

    /** Number of live subscriptions (for tests and diagnostics). */
    val subscriberCount: Int get() = synchronized(lock) { subscriptions.size }

    override fun toString(): String = "MooringEventPublisher($subscriberCount subscribers)"
}
