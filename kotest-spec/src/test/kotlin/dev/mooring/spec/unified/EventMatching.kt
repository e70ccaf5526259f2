package dev.mooring.spec.unified

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyOpeningEvent
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject
import org.bson.BsonDocument
import org.bson.types.ObjectId
import kotlin.reflect.KClass

/** The unified test format's event names for the CMAP, SDAM and command events, and how expected events match actual ones. */
object EventMatching {
    val cmap: Map<String, KClass<out MooringEvent>> = mapOf(
        "poolCreatedEvent" to PoolCreatedEvent::class,
        "poolReadyEvent" to PoolReadyEvent::class,
        "poolClearedEvent" to PoolClearedEvent::class,
        "poolClosedEvent" to PoolClosedEvent::class,
        "connectionCreatedEvent" to ConnectionCreatedEvent::class,
        "connectionReadyEvent" to ConnectionReadyEvent::class,
        "connectionClosedEvent" to ConnectionClosedEvent::class,
        "connectionCheckOutStartedEvent" to ConnectionCheckOutStartedEvent::class,
        "connectionCheckOutFailedEvent" to ConnectionCheckOutFailedEvent::class,
        "connectionCheckedOutEvent" to ConnectionCheckedOutEvent::class,
        "connectionCheckedInEvent" to ConnectionCheckedInEvent::class,
    )

    val sdam: Map<String, KClass<out MooringEvent>> = mapOf(
        "serverDescriptionChangedEvent" to ServerDescriptionChangedEvent::class,
        "serverOpeningEvent" to ServerOpeningEvent::class,
        "serverClosedEvent" to ServerClosedEvent::class,
        "topologyOpeningEvent" to TopologyOpeningEvent::class,
        "topologyDescriptionChangedEvent" to TopologyDescriptionChangedEvent::class,
        "topologyClosedEvent" to TopologyClosedEvent::class,
        "serverHeartbeatStartedEvent" to ServerHeartbeatStartedEvent::class,
        "serverHeartbeatSucceededEvent" to ServerHeartbeatSucceededEvent::class,
        "serverHeartbeatFailedEvent" to ServerHeartbeatFailedEvent::class,
    )

    val command: Map<String, KClass<out MooringEvent>> = mapOf(
        "commandStartedEvent" to CommandStartedEvent::class,
        "commandSucceededEvent" to CommandSucceededEvent::class,
        "commandFailedEvent" to CommandFailedEvent::class,
    )

    val all: Map<String, KClass<out MooringEvent>> = cmap + sdam + command

    /** True when [event] is the event named [name] with the fields of [expected]. Unknown fields fail loudly. */
    fun matches(name: String, expected: JsonObject, event: MooringEvent): Boolean {
        val type = all[name] ?: throw UnsupportedOperationException("event $name")
        if (!type.isInstance(event)) return false
        for ((key, value) in expected) {
            val ok = when (key) {
                "newDescription" -> descriptionMatches(value.jsonObject, newOf(event))
                "previousDescription" -> descriptionMatches(value.jsonObject, previousOf(event))
                "hasServiceId" -> serviceIdOf(event).let { (it != null) == (value as JsonPrimitive).booleanOrNull }
                "interruptInUseConnections" -> (event as PoolClearedEvent).interruptInUseConnections == (value as JsonPrimitive).booleanOrNull
                "awaited" -> awaitedOf(event) == (value as JsonPrimitive).booleanOrNull
                "reason" -> reasonOf(event).equals((value as JsonPrimitive).contentOrNull, ignoreCase = true)
                "command" -> ValueMatching.matches(BsonDocument.parse(value.toString()), (event as CommandStartedEvent).command)
                "reply" -> ValueMatching.matches(BsonDocument.parse(value.toString()), (event as CommandSucceededEvent).reply)
                "commandName" -> (event as CommandEvent).commandName == (value as JsonPrimitive).contentOrNull
                "databaseName" -> (event as CommandEvent).databaseName == (value as JsonPrimitive).contentOrNull
                "hasServerConnectionId" -> ((event as CommandEvent).serverConnectionId != null) == (value as JsonPrimitive).booleanOrNull
                else -> throw UnsupportedOperationException("event field $name.$key")
            }
            if (!ok) return false
        }
        return true
    }

    private fun serviceIdOf(e: MooringEvent): ObjectId? = when (e) {
        is PoolClearedEvent -> e.serviceId
        is CommandEvent -> e.serviceId
        else -> error("no serviceId on $e")
    }

    private fun newOf(e: MooringEvent): Any = when (e) {
        is ServerDescriptionChangedEvent -> e.newDescription
        is TopologyDescriptionChangedEvent -> e.newDescription
        else -> error("no newDescription on $e")
    }

    private fun previousOf(e: MooringEvent): Any = when (e) {
        is ServerDescriptionChangedEvent -> e.previousDescription
        is TopologyDescriptionChangedEvent -> e.previousDescription
        else -> error("no previousDescription on $e")
    }

    private fun descriptionMatches(expected: JsonObject, d: Any): Boolean {
        for ((key, value) in expected) {
            val want = (value as JsonPrimitive).contentOrNull
            val ok = when (key) {
                "type" -> when (d) {
                    is ServerDescription -> specName(d.type) == want
                    is TopologyDescription -> d.type.specName == want
                    else -> false
                }
                else -> throw UnsupportedOperationException("description field $key")
            }
            if (!ok) return false
        }
        return true
    }

    /** The SDAM spec's spelling of a server type. */
    fun specName(t: ServerType): String = when (t) {
        ServerType.STANDALONE -> "Standalone"
        ServerType.MONGOS -> "Mongos"
        ServerType.POSSIBLE_PRIMARY -> "PossiblePrimary"
        ServerType.RS_PRIMARY -> "RSPrimary"
        ServerType.RS_SECONDARY -> "RSSecondary"
        ServerType.RS_ARBITER -> "RSArbiter"
        ServerType.RS_OTHER -> "RSOther"
        ServerType.RS_GHOST -> "RSGhost"
        ServerType.LOAD_BALANCER -> "LoadBalancer"
        ServerType.UNKNOWN -> "Unknown"
    }

    private fun awaitedOf(e: MooringEvent): Boolean? = when (e) {
        is ServerHeartbeatStartedEvent -> e.awaited
        is ServerHeartbeatSucceededEvent -> e.awaited
        is ServerHeartbeatFailedEvent -> e.awaited
        else -> null
    }

    private fun reasonOf(e: MooringEvent): String? = when (e) {
        is ConnectionClosedEvent -> e.reason.specName
        is ConnectionCheckOutFailedEvent -> e.reason.specName
        else -> null
    }
}
