package dev.mooring.sdam.metrics

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import io.micrometer.core.instrument.Counter
import io.micrometer.core.instrument.Gauge
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tag
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.Timer
import io.micrometer.core.instrument.binder.MeterBinder
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit

/**
 * Micrometer metrics of a [MongoCluster]'s connection pools (needs `io.micrometer:micrometer-core`
 * on the classpath; Mooring declares it optional). Every meter carries the tag `server`
 * (`host:port`) plus the [tags] given here:
 *
 * | meter | type | source |
 * |---|---|---|
 * | `mooring.pool.connections` (tag `state`: `total`, `available`, `inUse`, `pending`) | gauge | [MongoCluster.poolStatistics] |
 * | `mooring.pool.waitqueue.size` | gauge | [MongoCluster.poolStatistics] |
 * | `mooring.pool.checkout.wait` | timer | ConnectionCheckedOut event durations |
 * | `mooring.pool.checkout.failures` (tag `reason`: `timeout`, `connectionError`, `poolClosed`) | counter | ConnectionCheckOutFailed events |
 * | `mooring.pool.clears` | counter | PoolCleared events |
 * | `mooring.pool.connections.created` | counter | ConnectionCreated events |
 *
 * Gauges read the pools' own state when the registry samples them (a server without a pool
 * reports `NaN`); they are registered for every pool present at [bindTo] and for each pool
 * created later. Timers and counters see events from [bindTo] on.
 *
 * ```
 * MooringMetrics(cluster).bindTo(registry)
 * ```
 *
 * **Concurrency.** Thread-safe; [bindTo] may be called for several registries (each gets every
 * meter). Meters are updated inside the cluster's event publication (a synchronous listener),
 * so a registry must not block. **After [close]** (or after the cluster is closed) counters and
 * timers stop changing and gauges report `NaN`; the meters stay in the registries (remove them
 * there if needed). [close] is idempotent. Nothing here suspends or launches coroutines.
 */
public class MooringMetrics(
    private val cluster: MongoCluster,
    tags: Iterable<Tag> = emptyList(),
) : MeterBinder, AutoCloseable {
    private val commonTags: Tags = Tags.of(tags)
    private val registries = CopyOnWriteArrayList<MeterRegistry>()
    private val lock = Any()
    private var subscription: AutoCloseable? = null
    private var closed = false

    /** Registers every meter with [registry] and starts following the cluster's events. */
    override fun bindTo(registry: MeterRegistry) {
        synchronized(lock) {
            check(!closed) { "these MooringMetrics are closed" }
            if (registries.addIfAbsent(registry)) {
                cluster.poolStatistics().keys.forEach { registerGauges(registry, it) }
            }
            if (subscription == null) subscription = cluster.addListener(EventListener { record(it) })
        }
    }

    /** Stops following the cluster's events. Idempotent. */
    override fun close() {
        synchronized(lock) {
            closed = true
            subscription?.close()
            subscription = null
        }
    }

    /** Updates the meters for one event (the listener's body; internal for tests). */
    internal fun record(event: MooringEvent) {
        when (event) {
            is ConnectionCheckedOutEvent -> registries.forEach {
                timer(it, event.address).record(event.duration.inWholeNanoseconds, TimeUnit.NANOSECONDS)
            }
            is ConnectionCheckOutFailedEvent -> registries.forEach {
                counter(it, CHECKOUT_FAILURES, event.address, Tag.of("reason", event.reason.specName)).increment()
            }
            is PoolClearedEvent -> registries.forEach { counter(it, CLEARS, event.address).increment() }
            is ConnectionCreatedEvent -> registries.forEach { counter(it, CREATED, event.address).increment() }
            is PoolCreatedEvent -> registries.forEach { registerGauges(it, event.address) }
            else -> {}
        }
    }

    private fun serverTags(address: ServerAddress, vararg extra: Tag): Tags =
        commonTags.and(Tag.of("server", address.toString())).and(*extra)

    private fun timer(registry: MeterRegistry, address: ServerAddress): Timer =
        Timer.builder(CHECKOUT_WAIT).description("Time from checkout start to a connection being checked out")
            .tags(serverTags(address)).register(registry)

    private fun counter(registry: MeterRegistry, name: String, address: ServerAddress, vararg extra: Tag): Counter =
        Counter.builder(name).tags(serverTags(address, *extra)).register(registry)

    private fun registerGauges(registry: MeterRegistry, address: ServerAddress) {
        gauge(registry, CONNECTIONS, address, "total") { it.totalConnections }
        gauge(registry, CONNECTIONS, address, "available") { it.availableConnections }
        gauge(registry, CONNECTIONS, address, "inUse") { it.inUseConnections }
        gauge(registry, CONNECTIONS, address, "pending") { it.pendingConnections }
        gauge(registry, WAIT_QUEUE, address, null) { it.waitQueueSize }
    }

    private fun gauge(registry: MeterRegistry, name: String, address: ServerAddress, state: String?, read: (ConnectionPoolStatistics) -> Int) {
        val tags = if (state == null) serverTags(address) else serverTags(address, Tag.of("state", state))
        Gauge.builder(name, this) { m -> m.poolValue(address, read) }.tags(tags).strongReference(true).register(registry)
    }

    private fun poolValue(address: ServerAddress, read: (ConnectionPoolStatistics) -> Int): Double {
        if (synchronized(lock) { closed }) return Double.NaN
        return cluster.poolStatistics()[address]?.let { read(it).toDouble() } ?: Double.NaN
    }

    /** The meter names. */
    public companion object {
        /** Gauge of the pool's connections, tag `state`. */
        public const val CONNECTIONS: String = "mooring.pool.connections"

        /** Gauge of checkouts waiting in the pool's wait queue. */
        public const val WAIT_QUEUE: String = "mooring.pool.waitqueue.size"

        /** Timer of checkout waits. */
        public const val CHECKOUT_WAIT: String = "mooring.pool.checkout.wait"

        /** Counter of failed checkouts, tag `reason`. */
        public const val CHECKOUT_FAILURES: String = "mooring.pool.checkout.failures"

        /** Counter of pool clears. */
        public const val CLEARS: String = "mooring.pool.clears"

        /** Counter of connections created. */
        public const val CREATED: String = "mooring.pool.connections.created"
    }
}
