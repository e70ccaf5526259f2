package dev.mooring.spec.sdam

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.PoolGenerations
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyOpeningEvent
import dev.mooring.sdam.TopologyVersion
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull
import org.bson.BsonDocument
import org.bson.types.ObjectId

/** Compares an SDAM test phase's `outcome` with the state the runner reached, field by field. */
internal object OutcomeMatcher {
    fun check(
        label: String,
        outcome: JsonObject,
        td: TopologyDescription,
        pools: PoolGenerations,
        events: List<MooringEvent>,
    ) {
        val problems = ArrayList<String>()
        outcome["servers"]?.jsonObject?.let { expected ->
            val want = expected.keys.map { ServerAddress.parse(it) }.toSet()
            if (want != td.servers.keys) problems += "servers: expected $want, got ${td.servers.keys}"
            for ((addr, fields) in expected) {
                val sd = td.servers[ServerAddress.parse(addr)] ?: continue
                checkServer("servers[$addr]", fields.jsonObject, sd, pools, problems)
            }
        }
        outcome["topologyType"]?.let { expect(problems, "topologyType", it.jsonPrimitive.content, td.type.specName) }
        outcome["setName"]?.let { expect(problems, "setName", str(it), td.setName) }
        outcome["logicalSessionTimeoutMinutes"]?.let { expect(problems, "logicalSessionTimeoutMinutes", it.longOrNullValue(), td.logicalSessionTimeoutMinutes?.toLong()) }
        outcome["maxSetVersion"]?.let { expect(problems, "maxSetVersion", it.longOrNullValue(), td.maxSetVersion) }
        outcome["maxElectionId"]?.let { expect(problems, "maxElectionId", oid(it), td.maxElectionId) }
        outcome["compatible"]?.let { expect(problems, "compatible", it.jsonPrimitive.booleanOrNull, td.compatible) }
        outcome["events"]?.let { checkEvents(it, events, problems) }
        if (problems.isNotEmpty()) throw AssertionError("$label:\n  " + problems.joinToString("\n  ") + "\n  topology: $td")
    }

    private fun checkServer(at: String, f: JsonObject, sd: ServerDescription, pools: PoolGenerations, problems: MutableList<String>) {
        f["type"]?.let { expect(problems, "$at.type", it.jsonPrimitive.content, sd.type.specName) }
        f["setName"]?.let { expect(problems, "$at.setName", str(it), sd.setName) }
        f["setVersion"]?.let { expect(problems, "$at.setVersion", it.longOrNullValue(), sd.setVersion) }
        f["electionId"]?.let { expect(problems, "$at.electionId", oid(it), sd.electionId) }
        f["logicalSessionTimeoutMinutes"]?.let { expect(problems, "$at.logicalSessionTimeoutMinutes", it.longOrNullValue(), sd.logicalSessionTimeoutMinutes?.toLong()) }
        // Wire versions default to 0 (SDAM ServerDescription); the tests write that default as null.
        f["minWireVersion"]?.let { expect(problems, "$at.minWireVersion", it.longOrNullValue() ?: 0L, sd.minWireVersion.toLong()) }
        f["maxWireVersion"]?.let { expect(problems, "$at.maxWireVersion", it.longOrNullValue() ?: 0L, sd.maxWireVersion.toLong()) }
        f["topologyVersion"]?.let { expect(problems, "$at.topologyVersion", tv(it), sd.topologyVersion) }
        f["pool"]?.jsonObject?.get("generation")?.let { expect(problems, "$at.pool.generation", it.longOrNullValue(), pools.generation(sd.address).toLong()) }
        f["error"]?.let { e ->
            val want = str(e)
            if (want == null) {
                expect(problems, "$at.error", null, sd.error)
            } else if (sd.error?.contains(want) != true) {
                problems += "$at.error: expected to contain '$want', got '${sd.error}'"
            }
        }
    }

    private fun checkEvents(expected: JsonElement, actual: List<MooringEvent>, problems: MutableList<String>) {
        val want = expected.jsonArray
        if (want.size != actual.size) {
            problems += "events: expected ${want.size} (${want.map { it.jsonObject.keys.first() }}), got ${actual.size} (${actual.map { it::class.simpleName }})"
        }
        for ((i, w) in want.withIndex()) {
            val a = actual.getOrNull(i) ?: break
            val (kind, body) = w.jsonObject.entries.single().let { it.key to it.value.jsonObject }
            val at = "events[$i] $kind"
            when (kind) {
                "topology_opening_event" -> if (a !is TopologyOpeningEvent) problems += "$at: got $a"
                "topology_closed_event" -> if (a !is TopologyClosedEvent) problems += "$at: got $a"
                "server_opening_event" -> if (a !is ServerOpeningEvent) {
                    problems += "$at: got $a"
                } else {
                    expect(problems, "$at.address", ServerAddress.parse(body.getValue("address").jsonPrimitive.content), a.address)
                }
                "server_closed_event" -> if (a !is ServerClosedEvent) {
                    problems += "$at: got $a"
                } else {
                    expect(problems, "$at.address", ServerAddress.parse(body.getValue("address").jsonPrimitive.content), a.address)
                }
                "server_description_changed_event" -> if (a !is ServerDescriptionChangedEvent) {
                    problems += "$at: got $a"
                } else {
                    expect(problems, "$at.address", ServerAddress.parse(body.getValue("address").jsonPrimitive.content), a.address)
                    eventServer("$at.previousDescription", body.getValue("previousDescription").jsonObject, a.previousDescription, problems)
                    eventServer("$at.newDescription", body.getValue("newDescription").jsonObject, a.newDescription, problems)
                }
                "topology_description_changed_event" -> if (a !is TopologyDescriptionChangedEvent) {
                    problems += "$at: got $a"
                } else {
                    eventTopology("$at.previousDescription", body.getValue("previousDescription").jsonObject, a.previousDescription, problems)
                    eventTopology("$at.newDescription", body.getValue("newDescription").jsonObject, a.newDescription, problems)
                }
                else -> problems += "$at: unknown event kind"
            }
        }
    }

    private fun eventTopology(at: String, w: JsonObject, td: TopologyDescription, problems: MutableList<String>) {
        w["topologyType"]?.let { expect(problems, "$at.topologyType", it.jsonPrimitive.content, td.type.specName) }
        w["setName"]?.let { expect(problems, "$at.setName", str(it), td.setName) }
        w["servers"]?.jsonArray?.let { servers ->
            val byAddress = servers.associateBy { ServerAddress.parse(it.jsonObject.getValue("address").jsonPrimitive.content) }
            if (byAddress.keys != td.servers.keys) problems += "$at.servers: expected ${byAddress.keys}, got ${td.servers.keys}"
            for ((addr, s) in byAddress) td.servers[addr]?.let { eventServer("$at.servers[$addr]", s.jsonObject, it, problems) }
        }
    }

    private fun eventServer(at: String, w: JsonObject, sd: ServerDescription, problems: MutableList<String>) {
        w["address"]?.let { expect(problems, "$at.address", ServerAddress.parse(it.jsonPrimitive.content), sd.address) }
        w["type"]?.let { expect(problems, "$at.type", ServerType.fromSpecName(it.jsonPrimitive.content), sd.type) }
        w["setName"]?.let { expect(problems, "$at.setName", str(it), sd.setName) }
        w["primary"]?.let { expect(problems, "$at.primary", str(it)?.let(ServerAddress::parse), sd.primary) }
        w["hosts"]?.let { expect(problems, "$at.hosts", addresses(it), sd.hosts) }
        w["passives"]?.let { expect(problems, "$at.passives", addresses(it), sd.passives) }
        w["arbiters"]?.let { expect(problems, "$at.arbiters", addresses(it), sd.arbiters) }
    }

    private fun addresses(e: JsonElement): Set<ServerAddress> = e.jsonArray.map { ServerAddress.parse(it.jsonPrimitive.content) }.toSet()

    private fun <T> expect(problems: MutableList<String>, what: String, expected: T, actual: T) {
        if (expected != actual) problems += "$what: expected $expected, got $actual"
    }

    private fun str(e: JsonElement): String? = if (e is JsonNull) null else e.jsonPrimitive.content

    private fun JsonElement.longOrNullValue(): Long? = when (this) {
        is JsonNull -> null
        is JsonPrimitive -> longOrNull ?: content.toDouble().toLong()
        is JsonObject -> BsonDocument.parse("""{"v": $this}""")["v"]!!.asNumber().longValue()
        else -> error("not a number: $this")
    }

    private fun oid(e: JsonElement): ObjectId? = if (e is JsonNull) null else ObjectId(e.jsonObject.getValue("\$oid").jsonPrimitive.content)

    private fun tv(e: JsonElement): TopologyVersion? = if (e is JsonNull) null else TopologyVersion.fromBson(BsonDocument.parse(e.toString()))
}
