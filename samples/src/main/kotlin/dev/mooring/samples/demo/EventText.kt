package dev.mooring.samples.demo

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyDescriptionChangedEvent

/** Short human-readable text of an event for the live view's "recent events". */
object EventText {
    /** `PoolCleared 127.0.0.1:40001`, `ServerDescriptionChanged 127.0.0.1:40001 RSPrimary -> RSSecondary`, ... */
    fun of(event: MooringEvent): String {
        val name = event.javaClass.simpleName.removeSuffix("Event")
        val detail = when (event) {
            is ServerDescriptionChangedEvent -> "${event.address} ${event.previousDescription.type.specName} -> ${event.newDescription.type.specName}"
            is TopologyDescriptionChangedEvent -> "${event.previousDescription.type.specName} -> ${event.newDescription.type.specName}"
            is ServerOpeningEvent -> "${event.address}"
            is ServerClosedEvent -> "${event.address}"
            is ServerHeartbeatFailedEvent -> "${event.address} ${event.failure.javaClass.simpleName}: ${event.failure.message}"
            is ConnectionCheckOutFailedEvent -> "${event.address} ${event.reason.specName}"
            is ConnectionClosedEvent -> "${event.address} #${event.connectionId} ${event.reason.specName}"
            is ConnectionCreatedEvent -> "${event.address} #${event.connectionId}"
            is ConnectionReadyEvent -> "${event.address} #${event.connectionId} in ${formatMillis(event.duration.inWholeMicroseconds / 1000.0)}"
            is PoolClearedEvent -> "${event.address}" + if (event.interruptInUseConnections) " (interrupting in-use connections)" else ""
            is ConnectionPoolEvent -> "${event.address}"
            is CommandEvent -> "${event.address} #${event.connectionId} ${event.databaseName}.${event.commandName}"
            else -> ""
        }
        return if (detail.isEmpty()) name else "$name $detail"
    }
}
