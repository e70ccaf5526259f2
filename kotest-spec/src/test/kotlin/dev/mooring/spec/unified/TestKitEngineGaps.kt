package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * Unified tests the in-process test kit cannot host, with the reason: its data engine
 * (mongo-java-server's memory backend) lacks what they need, and the test kit refuses such a
 * command as a server that does not know it would (see the test kit's `UnsupportedFeatures`)
 * rather than answer wrongly. They run against an external deployment. A test that expects the
 * operation to fail still runs (a fail point or the refusal gives it its error).
 */
object TestKitEngineGaps {
    private const val ENGINE = "the test kit's data engine (mongo-java-server's memory backend)"

    /** The reason the in-process test kit cannot host [test] of [file], or null. */
    fun reason(file: JsonObject, test: JsonObject): String? {
        // initialData's createOptions (unified-test-format.md) asking for a capped collection
        val initialData = file["initialData"] as? JsonArray ?: JsonArray(emptyList())
        if (initialData.any { (it.jsonObject["createOptions"] as? JsonObject)?.get("capped") == JsonPrimitive(true) }) {
            return "needs a capped collection (initialData createOptions), which $ENGINE does not have"
        }
        for (op in test["operations"]?.jsonArray?.map { it.jsonObject } ?: emptyList()) {
            if (op.containsKey("expectError")) continue
            val name = op["name"]?.jsonPrimitive?.content
            val args = op["arguments"] as? JsonObject ?: JsonObject(emptyMap())
            if (name == "mapReduce") return "needs mapReduce, which $ENGINE does not have"
            if (name == "find") FIND_OPTIONS.firstOrNull { args[it] == JsonPrimitive(true) }?.let { return "needs the find option $it, which $ENGINE ignores" }
            if (projectsDottedValue(args)) return "needs a \$project stage that sets a dotted path to a value, which $ENGINE takes as a field name"
            if (pipelineUpdate(args)) return "needs an update given as a pipeline, which $ENGINE does not have"
            if (name in LISTINGS && (args["filter"] as? JsonObject)?.isNotEmpty() == true) return "needs a $name filter, which $ENGINE ignores"
            if (name == "createCollection" && args["capped"] == JsonPrimitive(true)) return "needs a capped collection, which $ENGINE does not have"
            if (args.containsKey("let")) return "needs let variables, which $ENGINE ignores"
            if ((args["collation"] as? JsonObject)?.let { it["locale"] != JsonPrimitive("simple") } == true) return "needs a collation, which $ENGINE ignores"
        }
        return null
    }

    private val FIND_OPTIONS = listOf("returnKey", "showRecordId")

    private val LISTINGS = setOf("listCollections", "listCollectionNames", "listCollectionObjects", "listDatabases", "listDatabaseNames", "listDatabaseObjects")

    /** A `pipeline` of [args] with a `$project` stage that sets a dotted path (`{"a.b": value}`, not an inclusion or exclusion). */
    private fun projectsDottedValue(args: JsonObject): Boolean = (args["pipeline"] as? JsonArray).orEmpty().any { stage ->
        val project = (stage as? JsonObject)?.get("\$project") as? JsonObject ?: return@any false
        project.any { (k, v) -> '.' in k && (v as? JsonPrimitive)?.let { it.isString || (it.content != "0" && it.content != "1" && it.content != "true" && it.content != "false") } != false }
    }

    /** An update of [args] (or of one of its bulk write requests or models) given as a pipeline. */
    private fun pipelineUpdate(args: JsonObject): Boolean {
        if (args["update"] is JsonArray) return true
        val requests = (args["requests"] as? JsonArray ?: args["models"] as? JsonArray)?.mapNotNull { it as? JsonObject } ?: return false
        return requests.any { r -> r.values.any { (it as? JsonObject)?.get("update") is JsonArray } }
    }
}
