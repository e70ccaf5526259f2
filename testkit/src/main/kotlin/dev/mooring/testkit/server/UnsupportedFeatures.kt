package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * What the test kit's data engine (mongo-java-server's memory backend) would silently get wrong,
 * refused before it gets there. Options it ignores (a non-simple `collation`, `let` variables, a
 * find's `returnKey` and `showRecordId`, a listing's non-empty `filter`, a capped collection) are refused as a server that does not know the option
 * refuses it: `BSON field '<command>.<path>' is an unknown field.` (40415, as MongoDB 4.4
 * answers `let`) ([refusal]); so is an update given as a pipeline, as MongoDB 4.0 refuses it
 * (TypeMismatch, 14). A filter whose `$and`/`$or`/`$nor` is not an array, which the
 * engine accepts, is BadValue as on mongod ([filterError]). Pure.
 */
internal object UnsupportedFeatures {
    private const val UNKNOWN_FIELD = 40415
    private const val TYPE_MISMATCH = 14

    /** Per command, the statement array whose entries may carry the options too. */
    private val STATEMENTS = mapOf("update" to "updates", "delete" to "deletes")

    /** The refusal of [cmd], or null when the engine supports everything it asks for. */
    fun refusal(cmd: BsonDocument): BsonDocument? {
        val name = cmd.firstKey
        unsupportedIn(cmd)?.let { return unknownField("$name.$it") }
        if (name in LISTINGS && (cmd["filter"] as? BsonDocument)?.isEmpty() == false) return unknownField("$name.filter")
        if (name == "create" && cmd["capped"]?.let { it.isBoolean && it.asBoolean().value } == true) return unknownField("create.capped")
        if (name == "findAndModify" && cmd["update"] is BsonArray) return pipelineUpdate("findAndModify.update")
        val array = STATEMENTS[name] ?: return null
        for (statement in cmd[array] as? BsonArray ?: return null) {
            (statement as? BsonDocument)?.let(::unsupportedIn)?.let { return unknownField("$name.$array.$it") }
            if (name == "update" && (statement as? BsonDocument)?.get("u") is BsonArray) return pipelineUpdate("update.updates.u")
        }
        return null
    }

    /** An update given as a pipeline (MongoDB 4.2+), which the engine lacks: refused as a 4.0 server refuses it. */
    private fun pipelineUpdate(path: String) =
        WireServer.error(TYPE_MISMATCH, "TypeMismatch", "BSON field '$path' is the wrong type 'array', expected type 'object'")

    /** The listing commands, whose `filter` the engine ignores. */
    private val LISTINGS = setOf("listCollections", "listDatabases")

    /** The find options the engine ignores. */
    private val FIND_OPTIONS = listOf("returnKey", "showRecordId")

    /** The filter of each command (and of each statement of a write). */
    private val FILTERS = mapOf("find" to "filter", "count" to "query", "distinct" to "query", "findAndModify" to "query", "update" to "q", "delete" to "q")

    /**
     * The BadValue reply for a filter of [cmd] (a command, or a one-statement write) whose logical
     * operator is not an array, or null.
     */
    fun filterError(cmd: BsonDocument): BsonDocument? {
        val key = FILTERS[cmd.firstKey] ?: return null
        val holders = STATEMENTS[cmd.firstKey]?.let { (cmd[it] as? BsonArray)?.filterIsInstance<BsonDocument>() } ?: listOf(cmd)
        for (filter in holders.mapNotNull { it[key] as? BsonDocument }) {
            for (op in LOGICAL) if (filter.containsKey(op) && filter[op] !is BsonArray) return WireServer.error(2, "BadValue", "$op must be an array")
        }
        return null
    }

    private val LOGICAL = listOf("\$and", "\$or", "\$nor")

    /** The unsupported option of [doc], or null. */
    private fun unsupportedIn(doc: BsonDocument): String? = when {
        doc.containsKey("let") -> "let"
        doc.keys.firstOrNull() == "find" && FIND_OPTIONS.any { doc[it]?.let { v -> v.isBoolean && v.asBoolean().value } == true } ->
            FIND_OPTIONS.first { doc[it]?.let { v -> v.isBoolean && v.asBoolean().value } == true }
        (doc["collation"] as? BsonDocument)?.let { !isSimple(it) } == true -> "collation"
        else -> null
    }

    /** The simple binary comparison, which the engine does: `{locale: "simple"}`. */
    private fun isSimple(collation: BsonDocument) = collation.keys == setOf("locale") && collation["locale"] == BsonString("simple")

    private fun unknownField(path: String) = WireServer.error(UNKNOWN_FIELD, "Location$UNKNOWN_FIELD", "BSON field '$path' is an unknown field.")
}
