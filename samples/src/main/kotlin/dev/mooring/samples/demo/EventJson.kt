package dev.mooring.samples.demo

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.EventsDropped
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyOpeningEvent
import dev.mooring.driver.ChangeStreamDocument
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings
import kotlinx.serialization.json.JsonObjectBuilder
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import java.time.Instant

/**
 * Every event as one JSON object (`--json`), for log shipping: `ts` (ISO-8601), `event` (the
 * spec's event name without the `Event` suffix) and the event's fields; durations in
 * milliseconds (`durationMS`), enums by their spec names, errors as `type: message`.
 */
object EventJson {
    /** The JSON object of [event]. */
    fun of(event: MooringEvent): JsonObject = buildJsonObject {
        put("ts", Instant.ofEpochMilli(event.timestampMillis).toString())
        put("event", event.javaClass.simpleName.removeSuffix("Event"))
        if (event is ConnectionPoolEvent) put("address", event.address.toString())
        when (event) {
            is ConnectionCreatedEvent -> put("connectionId", event.connectionId)
            is ConnectionReadyEvent -> { put("connectionId", event.connectionId); put("durationMS", event.duration.inWholeMicroseconds / 1000.0) }
            is ConnectionClosedEvent -> { put("connectionId", event.connectionId); put("reason", event.reason.specName); error(event.error) }
            is ConnectionCheckOutFailedEvent -> { put("reason", event.reason.specName); put("durationMS", event.duration.inWholeMicroseconds / 1000.0); error(event.error) }
            is ConnectionCheckedOutEvent -> { put("connectionId", event.connectionId); put("durationMS", event.duration.inWholeMicroseconds / 1000.0) }
            is ConnectionCheckedInEvent -> put("connectionId", event.connectionId)
            is PoolClearedEvent -> { put("interruptInUseConnections", event.interruptInUseConnections); event.serviceId?.let { put("serviceId", it.toHexString()) } }
            is ServerOpeningEvent -> { put("topologyId", event.topologyId.toString()); put("address", event.address.toString()) }
            is ServerClosedEvent -> { put("topologyId", event.topologyId.toString()); put("address", event.address.toString()) }
            is ServerDescriptionChangedEvent -> {
                put("topologyId", event.topologyId.toString()); put("address", event.address.toString())
                put("previousDescription", server(event.previousDescription)); put("newDescription", server(event.newDescription))
            }
            is TopologyOpeningEvent -> put("topologyId", event.topologyId.toString())
            is TopologyClosedEvent -> put("topologyId", event.topologyId.toString())
            is TopologyDescriptionChangedEvent -> {
                put("topologyId", event.topologyId.toString())
                put("previousDescription", topology(event.previousDescription)); put("newDescription", topology(event.newDescription))
            }
            is ServerHeartbeatStartedEvent -> { put("address", event.address.toString()); put("awaited", event.awaited) }
            is ServerHeartbeatSucceededEvent -> { put("address", event.address.toString()); put("awaited", event.awaited); put("durationMS", event.durationNanos / 1e6) }
            is ServerHeartbeatFailedEvent -> { put("address", event.address.toString()); put("awaited", event.awaited); put("durationMS", event.durationNanos / 1e6); error(event.failure) }
            is EventsDropped -> put("count", event.count)
            else -> put("detail", event.toString())
        }
    }

    /**
     * The JSON object of a change stream event (`--watch`): `event: Change`, the namespace, the
     * operation type, the document key and the resume token as relaxed extended JSON, and the
     * event's cluster time; `ts` is when the demo received it.
     */
    fun ofChange(change: ChangeStreamDocument<*>, receivedMillis: Long = System.currentTimeMillis()): JsonObject = buildJsonObject {
        put("ts", Instant.ofEpochMilli(receivedMillis).toString())
        put("event", "Change")
        change.ns?.let { put("ns", it.db + (it.coll?.let { c -> ".$c" } ?: "")) }
        change.operationType?.let { put("operationType", it) }
        change.documentKey?.let { put("documentKey", Json.parseToJsonElement(it.toJson(RELAXED))) }
        change.clusterTime?.let { put("clusterTime", "${it.time}.${it.inc}") }
        put("resumeToken", Json.parseToJsonElement(change.resumeToken.toJson(RELAXED)))
    }

    private val RELAXED = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build()

    private fun JsonObjectBuilder.error(error: Throwable?) {
        if (error != null) put("error", "${error.javaClass.simpleName}: ${error.message}")
    }

    private fun server(d: ServerDescription): JsonObject = buildJsonObject {
        put("address", d.address.toString())
        put("type", d.type.specName)
        d.roundTripTimeMillis?.let { put("roundTripTimeMS", it) }
        d.error?.let { put("error", it) }
    }

    private fun topology(d: TopologyDescription): JsonObject = buildJsonObject {
        put("type", d.type.specName)
        d.setName?.let { put("setName", it) }
        put("servers", buildJsonArray { d.servers.values.forEach { add(server(it)) } })
    }
}
