package dev.mooring.spec.unified

import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import io.kotest.core.spec.style.FunSpec
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlin.time.Duration.Companion.seconds

/**
 * The `sdam-unified` suite over the test kit: each test runs against a simulated standalone
 * server or replica set with [dev.mooring.sdam.MongoCluster] clients; tests the kit or the
 * library cannot host are skipped with the reason.
 */
class SdamUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    specSuite("sdam-unified") { _, json ->
        val file = json.jsonObject
        val topology = hostTopology(file)
        file["tests"]!!.jsonArray.map { t ->
            val test = t.jsonObject
            val name = test["description"]!!.jsonPrimitive.content
            val reason = if (topology == null) topologyReason(file) else skipReason(file, test)
            SpecCase(name, reason) {
                UnifiedHost.start(topology!!).use { host -> UnifiedTestRun(host, file).run(test) }
            }
        }
    }
})

/** The first topology of the runOnRequirements the test kit can simulate, or null. */
private fun hostTopology(file: JsonObject): String? {
    val reqs = file["runOnRequirements"]?.jsonArray?.map { it.jsonObject } ?: return "single"
    for (r in reqs) {
        if ((r["auth"] as? JsonPrimitive)?.booleanOrNull == true) continue
        if (r.keys.any { it !in KNOWN_REQUIREMENTS }) continue
        val min = r["minServerVersion"]?.jsonPrimitive?.content
        if (min != null && compareVersions(min, SIMULATED_VERSION) > 0) continue
        val topologies = r["topologies"]?.jsonArray?.map { it.jsonPrimitive.content } ?: return "single"
        UnifiedHost.hostable.firstOrNull { it in topologies }?.let { return it }
    }
    return null
}

private const val AUTH_REASON = "needs a deployment that authenticates (runOnRequirements auth: true): Mooring has SCRAM " +
    "and the test kit has ScramServer, but this runner does not yet host authenticated deployments (open work of the " +
    "live-topology issue)"

/** The server version the test kit's servers claim (maxWireVersion 21). */
private const val SIMULATED_VERSION = "7.0"
private val KNOWN_REQUIREMENTS = setOf("minServerVersion", "maxServerVersion", "topologies", "serverless", "auth")

private fun compareVersions(a: String, b: String): Int {
    val x = a.split('.').map { it.toIntOrNull() ?: 0 }
    val y = b.split('.').map { it.toIntOrNull() ?: 0 }
    for (i in 0 until maxOf(x.size, y.size)) {
        val c = (x.getOrElse(i) { 0 }).compareTo(y.getOrElse(i) { 0 })
        if (c != 0) return c
    }
    return 0
}

private fun topologyReason(file: JsonObject): String {
    val reqs = file["runOnRequirements"]!!.jsonArray.map { it.jsonObject }
    val newer = reqs.mapNotNull { it["minServerVersion"]?.jsonPrimitive?.content }.filter { compareVersions(it, SIMULATED_VERSION) > 0 }
    if (newer.isNotEmpty() && newer.size == reqs.size) return "needs MongoDB ${newer.min()}+; the test kit simulates MongoDB $SIMULATED_VERSION (maxWireVersion 21)"
    reqs.flatMap { it.keys }.firstOrNull { it !in KNOWN_REQUIREMENTS }?.let { return "needs the runOnRequirements '$it', which the test kit cannot provide" }
    if (reqs.all { (it["auth"] as? JsonPrimitive)?.booleanOrNull == true }) return "$AUTH_REASON (runOnRequirements auth: true)"
    val wanted = file["runOnRequirements"]!!.jsonArray.flatMap { r -> r.jsonObject["topologies"]?.jsonArray?.map { it.jsonPrimitive.content } ?: emptyList() }
    return "needs a ${wanted.distinct().joinToString("/")} deployment: the test kit simulates standalone servers and replica sets only " +
        "(no mongos or load balancer simulator), and no real server is available on this machine"
}

private fun skipReason(file: JsonObject, test: JsonObject): String? {
    val text = test.toString()
    if (test.containsKey("expectLogMessages")) {
        return "asserts log messages through observeLogMessages; Mooring logs them to SLF4J and the runner has no log capture yet"
    }
    if (text.contains("\"saslContinue\"") || text.contains("\"saslStart\"")) return "$AUTH_REASON (its fail point targets the SASL conversation)"
    val events = Regex("\"(\\w+Event)\"").findAll(text).map { it.groupValues[1] }.filter { it !in UnifiedTestRun.SUPPORTED_OPERATIONS }.toSet()
    (events - EventMatching.all.keys).firstOrNull()?.let { return "asserts $it, which this runner does not map to a Mooring event" }
    val entities = Regex("\\{\"(\\w+)\":\\{\"id\"").findAll(file.toString() + text).map { it.groupValues[1] }.toSet()
    (entities - setOf("client", "database", "collection", "thread")).firstOrNull()?.let { return "creates a $it entity, which this runner does not implement" }
    val ops = operationNames(test["operations"]!!)
    (ops - UnifiedTestRun.SUPPORTED_OPERATIONS).firstOrNull()?.let { return "uses the $it operation, which this runner does not implement" }
    if (text.contains("\"blockConnection\"") && text.contains("\"closeConnection\":true") && text.contains("\"hello\"")) {
        return "blocks then closes hello connections; the test kit's fail point cannot hold a hello reply"
    }
    return null
}

private fun operationNames(e: JsonElement): Set<String> = when (e) {
    is JsonArray -> e.flatMap { operationNames(it) }.toSet()
    is JsonObject -> {
        val own = if (e["name"] is JsonPrimitive && e["object"] is JsonPrimitive) setOf(e["name"]!!.jsonPrimitive.content) else emptySet()
        own + e.values.flatMap { operationNames(it) }
    }
    else -> emptySet()
}
