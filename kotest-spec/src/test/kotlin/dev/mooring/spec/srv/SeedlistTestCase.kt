package dev.mooring.spec.srv

import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.intOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/** One file of the initial-dns-seedlist-discovery suite (see the suite's README, "Test Format and Use"). */
data class SeedlistTestCase(
    val uri: String,
    val seeds: List<String>?,
    val numSeeds: Int?,
    val hosts: List<String>?,
    val numHosts: Int?,
    val options: Map<String, JsonPrimitive>,
    val parsedOptions: Map<String, JsonPrimitive>,
    val error: Boolean,
    val ping: Boolean,
    val comment: String?,
) {
    companion object {
        fun parse(json: JsonElement): SeedlistTestCase {
            val o = json.jsonObject
            fun strings(key: String) = o[key]?.jsonArray?.map { it.jsonPrimitive.content }
            fun prims(key: String) = (o[key] as? JsonObject)?.mapValues { it.value.jsonPrimitive } ?: emptyMap()
            return SeedlistTestCase(
                uri = o.getValue("uri").jsonPrimitive.content,
                seeds = strings("seeds"),
                numSeeds = o["numSeeds"]?.jsonPrimitive?.intOrNull,
                hosts = strings("hosts"),
                numHosts = o["numHosts"]?.jsonPrimitive?.intOrNull,
                options = prims("options"),
                parsedOptions = prims("parsed_options"),
                error = o["error"]?.jsonPrimitive?.booleanOrNull ?: false,
                ping = o["ping"]?.jsonPrimitive?.booleanOrNull ?: true,
                comment = o["comment"]?.jsonPrimitive?.contentOrNull,
            )
        }
    }
}
