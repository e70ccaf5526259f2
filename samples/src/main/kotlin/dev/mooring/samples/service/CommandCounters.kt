package dev.mooring.samples.service

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import java.util.concurrent.atomic.AtomicLong

/**
 * Counts the cluster's command monitoring events; register it with `cluster.addListener`. It
 * asks only for CommandSucceeded and CommandFailed events ([eventTypes]), so the cluster builds
 * no other event for it.
 *
 * **Concurrency.** Thread-safe: [onEvent] runs on whichever thread publishes, the counters
 * are atomic and may be read at any time.
 */
class CommandCounters : EventListener {
    private val succeededCount = AtomicLong()
    private val failedCount = AtomicLong()

    /** CommandSucceeded events seen so far. */
    val succeeded: Long get() = succeededCount.get()

    /** CommandFailed events seen so far. */
    val failed: Long get() = failedCount.get()

    override val eventTypes: Set<Class<out MooringEvent>> = setOf(CommandSucceededEvent::class.java, CommandFailedEvent::class.java)

    override fun onEvent(event: MooringEvent) {
        when (event) {
            is CommandSucceededEvent -> succeededCount.incrementAndGet()
            is CommandFailedEvent -> failedCount.incrementAndGet()
            else -> Unit
        }
    }
}
