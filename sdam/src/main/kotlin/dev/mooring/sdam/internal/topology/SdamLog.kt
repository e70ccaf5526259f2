package dev.mooring.sdam.internal.topology

import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.events.StructuredLog
import dev.mooring.sdam.SdamEvent
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologyOpeningEvent

/**
 * The SDAM log messages of the logging-and-monitoring spec that accompany topology and server
 * lifecycle events (heartbeat messages belong to the monitors), to SLF4J and the client's log
 * sink ([logging]). Stateless, thread-safe.
 */
internal class SdamLog(logging: LoggingSettings) {
    private val log = StructuredLog("topology", logging)

    /** Logs the message that goes with [event], if it has one. */
    fun logFor(event: SdamEvent) {
        if (!log.isDebugEnabled) return
        when (event) {
            is TopologyOpeningEvent -> log.debug("Starting topology monitoring") { common(event.topologyId) }
            is TopologyClosedEvent -> log.debug("Stopped topology monitoring") { common(event.topologyId) }
            is ServerOpeningEvent -> log.debug("Starting server monitoring") { common(event.topologyId, event.address) }
            is ServerClosedEvent -> log.debug("Stopped server monitoring") { common(event.topologyId, event.address) }
            is TopologyDescriptionChangedEvent -> log.debug("Topology description changed") {
                common(event.topologyId)
                put("previousDescription", event.previousDescription.toString())
                put("newDescription", event.newDescription.toString())
            }
            // logged by the monitors (heartbeats) or not at all (the spec has no message for it)
            is ServerHeartbeatEvent, is ServerDescriptionChangedEvent -> Unit
        }
    }

    private fun MutableMap<String, Any?>.common(id: TopologyId, address: ServerAddress? = null) {
        put("topologyId", id.value)
        if (address != null) serverFields(address)
    }
}

/** Adds `serverHost` and (except for Unix domain sockets) `serverPort`. */
internal fun MutableMap<String, Any?>.serverFields(address: ServerAddress) {
    put("serverHost", address.host)
    if (!address.isUnixSocket) put("serverPort", address.port)
}
