package dev.mooring.samples.demo

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.LongAdder

/**
 * What the demo measures: operations and errors (from the workload), checkout waits, pool
 * clears, connections created and the [recent] events panel (from the cluster's events).
 * Thread-safe; [onEvent] is quick (it runs inside the publisher).
 */
class DemoStats(
    /** The live view's "Recent events" panel. */
    val recent: RecentEvents = RecentEvents(),
) : EventListener {
    private val ops = LongAdder()
    private val errorsByType = ConcurrentHashMap<String, LongAdder>()
    @Volatile private var startNanos = System.nanoTime()

    /** Checkout waits (ConnectionCheckedOut durations). */
    val checkoutWaits: WaitHistogram = WaitHistogram()

    /** Checkouts that failed. */
    val checkoutFailures: AtomicLong = AtomicLong()

    /** Pool clears. */
    val poolClears: AtomicLong = AtomicLong()

    /** Connections created. */
    val connectionsCreated: AtomicLong = AtomicLong()

    /** Every event seen. */
    val events: AtomicLong = AtomicLong()

    /** Counts one successful operation. */
    fun operationSucceeded() = ops.increment()

    /** Counts one failed operation by its exception type. */
    fun operationFailed(error: Throwable) {
        errorsByType.computeIfAbsent(error.javaClass.simpleName) { LongAdder() }.increment()
    }

    /** Successful operations so far. */
    val operations: Long get() = ops.sum()

    /** Failed operations so far. */
    val errors: Long get() = errorsByType.values.sumOf { it.sum() }

    /** Failed operations by exception type. */
    fun errorsByType(): Map<String, Long> = errorsByType.mapValues { it.value.sum() }.toSortedMap()

    /** Starts the run's clock now (when the workload starts). */
    fun startClock() {
        startNanos = System.nanoTime()
    }

    /** Seconds since [startClock] (or since this object was created). */
    val elapsedSeconds: Double get() = (System.nanoTime() - startNanos) / 1e9

    override fun onEvent(event: MooringEvent) {
        events.incrementAndGet()
        when (event) {
            is ConnectionCheckedOutEvent -> checkoutWaits.record(event.duration.inWholeNanoseconds)
            is ConnectionCheckOutFailedEvent -> checkoutFailures.incrementAndGet()
            is PoolClearedEvent -> poolClears.incrementAndGet()
            is ConnectionCreatedEvent -> connectionsCreated.incrementAndGet()
            else -> {}
        }
        recent.record(event)
    }
}
