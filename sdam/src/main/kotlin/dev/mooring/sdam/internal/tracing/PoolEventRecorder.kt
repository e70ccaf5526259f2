package dev.mooring.sdam.internal.tracing

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.context.Context
import java.util.concurrent.ConcurrentHashMap

/**
 * Records where an operation waited, as events of its span: `server selected` (the selection
 * wait; published when the checkout starts, on the operation's coroutine, whose OpenTelemetry
 * context carries the operation), `connection checked out` ([checkedOut]: the checkout wait and
 * whether the connection was opened while the operation waited) and `connection checkout failed`.
 * A checkout can be completed by another coroutine (a connection handed over at check-in or when
 * its establishment finishes), so the checkout itself is recorded when the operation receives the
 * connection, and the ready times of connections are kept (until they close) to tell new ones.
 * Thread-safe; quick (runs in the publisher).
 */
internal class PoolEventRecorder : EventListener {
    private data class Key(val address: ServerAddress, val id: Long)

    /** When each open connection became ready ([System.nanoTime]). */
    private val readyAt = ConcurrentHashMap<Key, Long>()

    /** Pool and connection events only: the tracer's spans do not need command events built for them. */
    override val eventTypes: Set<Class<out MooringEvent>> = setOf(ConnectionPoolEvent::class.java)

    override fun onEvent(event: MooringEvent) {
        when (event) {
            is ConnectionReadyEvent -> readyAt[Key(event.address, event.connectionId)] = System.nanoTime()
            is ConnectionClosedEvent -> readyAt.remove(Key(event.address, event.connectionId))
            is ConnectionCheckOutStartedEvent -> current()?.let { op ->
                val now = System.nanoTime()
                op.checkoutStartNanos = now
                op.span.addEvent(
                    "server selected",
                    Attributes.builder().put("server.address", event.address.host).put("server.port", event.address.port.toLong())
                        .put("mooring.selection.wait_ms", (now - op.selectionStartNanos) / 1e6).build(),
                )
            }
            is ConnectionCheckOutFailedEvent -> current()?.let { op ->
                op.span.addEvent(
                    "connection checkout failed",
                    Attributes.builder().put("mooring.checkout.wait_ms", event.duration.inWholeMicroseconds / 1e3)
                        .put("mooring.checkout.failure", event.reason.specName).build(),
                )
                op.selectionStartNanos = System.nanoTime() // a retry selects again from here
            }
            else -> {}
        }
    }

    /** Records that the current operation received [connection] from the pool. */
    fun checkedOut(connection: Connection) {
        val op = current() ?: return
        val now = System.nanoTime()
        val started = op.checkoutStartNanos ?: now
        val ready = readyAt[Key(connection.address, connection.id)]
        op.span.addEvent(
            "connection checked out",
            Attributes.builder().put("db.mongodb.driver_connection_id", connection.id)
                .put("mooring.checkout.wait_ms", (now - started) / 1e6)
                .put("mooring.connection.new", ready != null && ready >= started).build(),
        )
        op.checkoutStartNanos = null
    }

    private fun current(): OpenTelemetryTracer.OperationTrace? = Context.current().get(OpenTelemetryTracer.OperationTrace.KEY)
}
