package dev.mooring.sdam.metrics

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.metrics.DoubleHistogram
import io.opentelemetry.api.metrics.LongCounter
import java.util.concurrent.ConcurrentHashMap

/**
 * The OpenTelemetry database-client connection metrics (semantic conventions
 * `db.client.connection.*`) of a [MongoCluster]'s pools, on the meter `dev.mooring` of
 * [openTelemetry] (needs `io.opentelemetry:opentelemetry-api`, an optional dependency of Mooring).
 * Every measurement carries `db.client.connection.pool.name` = the server's `host:port`.
 *
 * | instrument | type | source |
 * |---|---|---|
 * | `db.client.connection.count` (`db.client.connection.state` = `idle` / `used`) | async up-down counter | [MongoCluster.poolStatistics] |
 * | `db.client.connection.pending_requests` | async up-down counter | [MongoCluster.poolStatistics] (waiting checkouts) |
 * | `db.client.connection.max`, `db.client.connection.idle.min` | async up-down counters | the pool settings (`max` only when maxPoolSize is not 0) |
 * | `db.client.connection.timeouts` | counter | ConnectionCheckOutFailed events with reason `timeout` |
 * | `db.client.connection.create_time` (s) | histogram | ConnectionReady durations (connect, handshake, authentication) |
 * | `db.client.connection.wait_time` (s) | histogram | ConnectionCheckedOut durations |
 * | `db.client.connection.use_time` (s) | histogram | checked out to checked in |
 *
 * The asynchronous instruments read the pools' own state when the SDK collects; the others see
 * events from construction on.
 *
 * **Concurrency.** Thread-safe; measurements are taken inside the cluster's event publication (a
 * synchronous listener). **After [close]** (or after the cluster is closed) nothing more is
 * recorded and the asynchronous instruments report nothing. [close] is idempotent.
 */
public class MooringOpenTelemetryMetrics(
    private val cluster: MongoCluster,
    openTelemetry: OpenTelemetry = GlobalOpenTelemetry.get(),
) : AutoCloseable {
    private val meter = openTelemetry.meterBuilder(SCOPE).build()
    private val attributes = ConcurrentHashMap<ServerAddress, Attributes>()
    private val checkedOutAt = ConcurrentHashMap<Pair<ServerAddress, Long>, Long>()

    private val timeouts: LongCounter = meter.counterBuilder("db.client.connection.timeouts").setUnit("{timeout}")
        .setDescription("Checkouts that timed out waiting for a connection").build()
    private val createTime: DoubleHistogram = histogram("db.client.connection.create_time", "Time it took to create a new connection")
    private val waitTime: DoubleHistogram = histogram("db.client.connection.wait_time", "Time it took to obtain an open connection from the pool")
    private val useTime: DoubleHistogram = histogram("db.client.connection.use_time", "Time between borrowing a connection and returning it to the pool")

    private val observers: List<AutoCloseable> = listOf(
        meter.upDownCounterBuilder("db.client.connection.count").setUnit("{connection}")
            .setDescription("Connections that are idle or in use").buildWithCallback { m ->
                cluster.poolStatistics().forEach { (address, s) ->
                    m.record(s.availableConnections.toLong(), attributesOf(address).toBuilder().put(STATE, "idle").build())
                    m.record(s.inUseConnections.toLong(), attributesOf(address).toBuilder().put(STATE, "used").build())
                }
            },
        meter.upDownCounterBuilder("db.client.connection.pending_requests").setUnit("{request}")
            .setDescription("Checkouts waiting for a connection").buildWithCallback { m ->
                cluster.poolStatistics().forEach { (address, s) -> m.record(s.waitQueueSize.toLong(), attributesOf(address)) }
            },
        meter.upDownCounterBuilder("db.client.connection.max").setUnit("{connection}")
            .setDescription("The most connections allowed (maxPoolSize)").buildWithCallback { m ->
                val max = cluster.settings.pool.maxPoolSize
                if (max > 0) cluster.poolStatistics().keys.forEach { m.record(max.toLong(), attributesOf(it)) }
            },
        meter.upDownCounterBuilder("db.client.connection.idle.min").setUnit("{connection}")
            .setDescription("The fewest connections kept open (minPoolSize)").buildWithCallback { m ->
                cluster.poolStatistics().keys.forEach { m.record(cluster.settings.pool.minPoolSize.toLong(), attributesOf(it)) }
            },
    )

    private val subscription: AutoCloseable = cluster.addListener(EventListener { record(it) })

    private fun record(event: MooringEvent) {
        when (event) {
            is ConnectionReadyEvent -> createTime.record(seconds(event.duration.inWholeNanoseconds), attributesOf(event.address))
            is ConnectionCheckedOutEvent -> {
                waitTime.record(seconds(event.duration.inWholeNanoseconds), attributesOf(event.address))
                checkedOutAt[event.address to event.connectionId] = System.nanoTime()
            }
            is ConnectionCheckedInEvent -> checkedOutAt.remove(event.address to event.connectionId)?.let {
                useTime.record(seconds(System.nanoTime() - it), attributesOf(event.address))
            }
            is ConnectionClosedEvent -> checkedOutAt.remove(event.address to event.connectionId)
            is ConnectionCheckOutFailedEvent ->
                if (event.reason == ConnectionCheckOutFailedReason.TIMEOUT) timeouts.add(1, attributesOf(event.address))
            else -> {}
        }
    }

    /** Stops recording and unregisters the asynchronous instruments. Idempotent. */
    override fun close() {
        subscription.close()
        observers.forEach { it.close() }
        checkedOutAt.clear()
    }

    private fun histogram(name: String, description: String): DoubleHistogram =
        meter.histogramBuilder(name).setUnit("s").setDescription(description).build()

    private fun attributesOf(address: ServerAddress): Attributes =
        attributes.computeIfAbsent(address) { Attributes.of(POOL_NAME, it.toString()) }

    private fun seconds(nanos: Long): Double = nanos / 1e9

    private companion object {
        const val SCOPE = "dev.mooring"
        val POOL_NAME: AttributeKey<String> = AttributeKey.stringKey("db.client.connection.pool.name")
        val STATE: AttributeKey<String> = AttributeKey.stringKey("db.client.connection.state")
    }
}
