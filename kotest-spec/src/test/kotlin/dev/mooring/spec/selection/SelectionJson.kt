package dev.mooring.spec.selection

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.WireVersions
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonDocument

/** Reads the topology descriptions and read preferences of the server selection / max staleness test format. */
internal object SelectionJson {
    fun topology(json: JsonObject): TopologyDescription {
        val type = json.getValue("type").jsonPrimitive.content.let { TopologyType.fromSpecName(it) ?: error("unknown topology type $it") }
        val servers = json.getValue("servers").jsonArray.map { server(it.jsonObject) }
        return TopologyDescription(type, servers.associateBy { it.address })
    }

    fun server(s: JsonObject): ServerDescription {
        val type = s.getValue("type").jsonPrimitive.content.let { ServerType.fromSpecName(it) ?: error("unknown server type $it") }
        val rtt = s["avg_rtt_ms"]?.takeUnless { it is JsonNull }?.jsonPrimitive?.content?.toDouble()
        val lastWrite = (s["lastWrite"] as? JsonObject)?.get("lastWriteDate")?.let { number(it) }
        return ServerDescription(
            address = ServerAddress.parse(s.getValue("address").jsonPrimitive.content),
            type = type,
            roundTripTimeMillis = rtt,
            lastWriteDate = lastWrite,
            lastUpdateTimeMillis = s["lastUpdateTime"]?.let { number(it) },
            // The format gives wire versions only where they matter; other servers speak the
            // client's newest version, as any current server would.
            maxWireVersion = s["maxWireVersion"]?.let { number(it).toInt() }
                ?: if (type.isKnown) WireVersions.CLIENT_MAX_WIRE_VERSION else 0,
            tags = (s["tags"] as? JsonObject)?.mapValues { it.value.jsonPrimitive.content } ?: emptyMap(),
        )
    }

    /** Builds the read preference; invalid combinations throw (as ReadPreference's own validation does). */
    fun readPreference(json: JsonObject?): ReadPreference {
        if (json == null) return ReadPreference.PRIMARY
        val modeName = json["mode"]?.jsonPrimitive?.content ?: "primary"
        val mode = ReadPreferenceMode.fromValue(modeName) ?: throw IllegalArgumentException("unknown read preference mode $modeName")
        val tagSets = json["tag_sets"]?.jsonArray?.map { set -> set.jsonObject.mapValues { it.value.jsonPrimitive.content } } ?: emptyList()
        val max = json["maxStalenessSeconds"]?.takeUnless { it is JsonNull }?.let { number(it) }
        return ReadPreference(mode, tagSets, max)
    }

    fun addresses(list: JsonElement?): Set<ServerAddress> =
        list?.jsonArray?.map { ServerAddress.parse(it.jsonObject.getValue("address").jsonPrimitive.content) }?.toSet() ?: emptySet()

    fun number(e: JsonElement): Long = when (e) {
        is JsonPrimitive -> e.content.toDouble().toLong()
        is JsonObject -> BsonDocument.parse("""{"v": $e}""")["v"]!!.asNumber().longValue()
        else -> error("not a number: $e")
    }
}
