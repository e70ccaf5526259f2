package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject

/**
 * What the runner checks of a unified test file when it loads it, before runOnRequirements or a
 * known gap decide whether a test runs (unified-test-format.md "entity", "Entity Map"): each
 * entity object has exactly one entity type with a string `id`; ids are unique; the client,
 * database and key vault client an entity names are defined, with that type; `clientEncryption`
 * entities and `autoEncryptOpts` carry well-formed KMS providers ([KmsProviders]). A malformed
 * entity fails every test that would create it ([UnifiedTestFailure.InvalidTestFile]) even where
 * the test would otherwise be skipped: a file cannot be skipped into passing. Pure.
 */
object UnifiedFileValidation {
    /** Raises [UnifiedTestFailure.InvalidTestFile] for the first malformed entity [test] of [file] would create. */
    fun requireValid(file: JsonObject, test: JsonObject) {
        val entities = (file["createEntities"] as? JsonArray ?: JsonArray(emptyList())) + createdByOperations(test["operations"])
        val kinds = HashMap<String, String>()
        for (e in entities) {
            val o = e as? JsonObject ?: invalidTest("an entity must be an object, got $e")
            if (o.size != 1) invalidTest("an entity object must have exactly one entity type, got ${o.keys}")
            val (kind, spec) = o.entries.single()
            val fields = spec as? JsonObject ?: invalidTest("the $kind entity must be an object")
            val id = (fields["id"] as? JsonPrimitive)?.takeIf { it.isString }?.content ?: invalidTest("the $kind entity has no string id (required)")
            if (kinds.put(id, kind) != null) invalidTest("entity id '$id' is defined twice")
        }
        for (e in entities) {
            val (kind, spec) = e.jsonObject.entries.single()
            val fields = spec.jsonObject
            val id = (fields["id"] as JsonPrimitive).content
            REFERENCES[kind]?.forEach { (field, wanted) -> requireReference(kinds, kind, id, field, fields[field], wanted) }
            if (kind == "clientEncryption") {
                val opts = fields["clientEncryptionOpts"] as? JsonObject ?: invalidTest("clientEncryption $id has no clientEncryptionOpts (required)")
                requireReference(kinds, kind, id, "clientEncryptionOpts.keyVaultClient", opts["keyVaultClient"], "client")
                requireNamespace(id, opts["keyVaultNamespace"])
                KmsProviders.requireValid("clientEncryption $id", opts["kmsProviders"])
            }
            if (kind == "client") {
                (fields["autoEncryptOpts"] as? JsonObject)?.let { auto ->
                    requireNamespace(id, auto["keyVaultNamespace"])
                    KmsProviders.requireValid("client $id autoEncryptOpts", auto["kmsProviders"])
                }
            }
        }
    }

    /** The entity fields that name another entity, and the type it must have. */
    private val REFERENCES = mapOf(
        "database" to listOf("client" to "client"),
        "collection" to listOf("database" to "database"),
        "session" to listOf("client" to "client"),
        "bucket" to listOf("database" to "database"),
    )

    private fun requireReference(kinds: Map<String, String>, kind: String, id: String, field: String, value: JsonElement?, wanted: String) {
        val name = (value as? JsonPrimitive)?.takeIf { it.isString }?.content ?: invalidTest("$kind $id has no $field (required string)")
        val found = kinds[name] ?: invalidTest("$kind $id names $field '$name', which is not a defined entity")
        if (found != wanted) invalidTest("$kind $id names $field '$name', a $found entity where a $wanted entity is required")
    }

    private fun requireNamespace(id: String, value: JsonElement?) {
        val ns = (value as? JsonPrimitive)?.takeIf { it.isString }?.content ?: invalidTest("entity $id has no keyVaultNamespace (required string)")
        val dot = ns.indexOf('.')
        if (dot <= 0 || dot == ns.length - 1) invalidTest("entity $id: keyVaultNamespace '$ns' is not 'database.collection'")
    }

    /** The entities of the test's `createEntities` operations (they join the same entity map). */
    private fun createdByOperations(operations: JsonElement?): List<JsonElement> =
        (operations as? JsonArray ?: JsonArray(emptyList())).flatMap { op ->
            val o = op as? JsonObject ?: return@flatMap emptyList()
            val name = (o["name"] as? JsonPrimitive)?.content
            if (name == "createEntities") ((o["arguments"] as? JsonObject)?.get("entities") as? JsonArray) ?: emptyList()
            else ((o["arguments"] as? JsonObject)?.get("operation"))?.let { createdByOperations(JsonArray(listOf(it))) } ?: emptyList()
        }
}
