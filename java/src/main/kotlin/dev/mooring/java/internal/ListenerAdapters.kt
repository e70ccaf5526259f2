package dev.mooring.java.internal

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.java.ClusterListener
import dev.mooring.java.CommandListener
import dev.mooring.java.ConnectionPoolListener
import dev.mooring.java.ServerListener
import dev.mooring.java.ServerMonitorListener
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerEvent
import dev.mooring.sdam.ServerHeartbeatEvent
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyEvent
import dev.mooring.sdam.TopologyOpeningEvent

/**
 * An [EventListener] that routes each event to the typed method of one Java listener.
 * [target] is the user's object: registrations are found and removed by it ([isFor]). [eventTypes] is the
 * event family the listener takes (null: every event), so that events nobody wants are not built.
 */
internal class ListenerAdapter(
    private val target: Any,
    override val eventTypes: Set<Class<out MooringEvent>>?,
    private val route: (MooringEvent) -> Unit,
) : EventListener {
    override fun onEvent(event: MooringEvent) = route(event)
    override fun toString(): String = target.toString()

    /** True when this adapter routes to [listener] (the very object, not an equal one). */
    fun isFor(listener: Any): Boolean = target === listener
}

/**
 * Adapters from the cluster's events to the Java listener interfaces. Each routes one sealed
 * family ([ConnectionPoolEvent], [ServerHeartbeatEvent], [ServerEvent], [TopologyEvent],
 * [CommandEvent]) with an exhaustive `when`, so a new event of a family is a compile error here
 * until its listener method exists; events of other families are not the listener's.
 */
internal object ListenerAdapters {
    fun pool(l: ConnectionPoolListener): ListenerAdapter = ListenerAdapter(l, setOf(ConnectionPoolEvent::class.java)) { e ->
        if (e is ConnectionPoolEvent) {
            when (e) {
                is PoolCreatedEvent -> l.connectionPoolCreated(e)
                is PoolReadyEvent -> l.connectionPoolReady(e)
                is PoolClearedEvent -> l.connectionPoolCleared(e)
                is PoolClosedEvent -> l.connectionPoolClosed(e)
                is ConnectionCreatedEvent -> l.connectionCreated(e)
                is ConnectionReadyEvent -> l.connectionReady(e)
                is ConnectionClosedEvent -> l.connectionClosed(e)
                is ConnectionCheckOutStartedEvent -> l.connectionCheckOutStarted(e)
                is ConnectionCheckOutFailedEvent -> l.connectionCheckOutFailed(e)
                is ConnectionCheckedOutEvent -> l.connectionCheckedOut(e)
                is ConnectionCheckedInEvent -> l.connectionCheckedIn(e)
            }
        }
    }

    fun monitor(l: ServerMonitorListener): ListenerAdapter = ListenerAdapter(l, setOf(ServerHeartbeatEvent::class.java)) { e ->
        if (e is ServerHeartbeatEvent) {
            when (e) {
                is ServerHeartbeatStartedEvent -> l.serverHeartbeatStarted(e)
                is ServerHeartbeatSucceededEvent -> l.serverHeartbeatSucceeded(e)
                is ServerHeartbeatFailedEvent -> l.serverHeartbeatFailed(e)
            }
        }
    }

    fun server(l: ServerListener): ListenerAdapter = ListenerAdapter(l, setOf(ServerEvent::class.java)) { e ->
        if (e is ServerEvent) {
            when (e) {
                is ServerOpeningEvent -> l.serverOpening(e)
                is ServerClosedEvent -> l.serverClosed(e)
                is ServerDescriptionChangedEvent -> l.serverDescriptionChanged(e)
            }
        }
    }

    fun cluster(l: ClusterListener): ListenerAdapter = ListenerAdapter(l, setOf(TopologyEvent::class.java)) { e ->
        if (e is TopologyEvent) {
            when (e) {
                is TopologyOpeningEvent -> l.clusterOpening(e)
                is TopologyClosedEvent -> l.clusterClosed(e)
                is TopologyDescriptionChangedEvent -> l.clusterDescriptionChanged(e)
            }
        }
    }

    fun command(l: CommandListener): ListenerAdapter = ListenerAdapter(l, setOf(CommandEvent::class.java)) { e ->
        if (e is CommandEvent) {
            when (e) {
                is CommandStartedEvent -> l.commandStarted(e)
                is CommandSucceededEvent -> l.commandSucceeded(e)
                is CommandFailedEvent -> l.commandFailed(e)
            }
        }
    }

    /** [l] gets the events of the types it declares ([EventListener.eventTypes], read once here), as on the bus. */
    fun any(l: EventListener): ListenerAdapter {
        val types = l.eventTypes
        return ListenerAdapter(l, types) { e -> if (types == null || types.any { it.isInstance(e) }) l.onEvent(e) }
    }
}
