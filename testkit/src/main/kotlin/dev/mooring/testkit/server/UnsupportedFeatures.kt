package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * What the test kit's data engine (mongo-java-server's memory backend) would silently get wrong,
 * refused before it gets there. Options it ignores (a non-simple `collation`, `let` variables, a
 * find's `returnKey` and `showRecordId`, a listing's non-empty `filter`, a capped collection) are refused as a server that does not know the option
 * refuses it: `BSON field '<command>.<path>' is an unknown field.` (40415) ([refusal]). The
 * test kit binds `let` itself ([LetVariables]) and runs pipeline updates on the engine's stages
 * ([PipelineUpdates]); a server simulating an older version refuses them as that version does:
 * `let` before MongoDB 5.0 (40415 as 4.4 answers it, an aggregate's FailedToParse "unrecognized
 * field 'let'", findAndModify's 51177 "BSON field 'let' is an unknown field."), an update given as a pipeline before 4.2 (TypeMismatch, 14, as 4.0 answers). The `sort` of an
 * update statement (the test kit applies it: [ComposedUpdates]) is refused before 8.0 by
 * [ServerVersionFields], the home of the fields a release learned. A
 * filter whose `$and`/`$or`/`$nor` is not an array, which the engine accepts, is BadValue as on
 * mongod ([filterError]). Pure.
 */
internal object UnsupportedFeatures {
    private const val UNKNOWN_FIELD = 40415
    private const val TYPE_MISMATCH = 14
    private const val FAILED_TO_PARSE = 9
    private const val FIND_AND_MODIFY_UNKNOWN_FIELD = 51177

    /** The wire version a server reports unless told otherwise (MongoDB 7.0). */
    const val DEFAULT_WIRE_VERSION = 21

    /** MongoDB 5.0, the first to accept the command option `let` (aggregate, find, update, delete, findAndModify). */
    private const val LET_WIRE_VERSION = 13

    /** MongoDB 4.2, the first to accept an update given as a pipeline. */
    private const val PIPELINE_UPDATE_WIRE_VERSION = 8

    /** Per command, the statement array whose entries may carry the options too. */
    private val STATEMENTS = mapOf("update" to "updates", "delete" to "deletes")

    /** The refusal of [cmd] by a server of [wireVersion], or null when the engine (with the test kit's help) supports everything it asks for. */
    fun refusal(cmd: BsonDocument, wireVersion: Int = DEFAULT_WIRE_VERSION): BsonDocument? {
        val name = cmd.firstKey
        if (cmd.containsKey("let") && wireVersion < LET_WIRE_VERSION) {
            return when (name) {
                "aggregate" -> WireServer.error(FAILED_TO_PARSE, "FailedToParse", "unrecognized field 'let'")
                // findAndModify's own parser before MongoDB 5.0 names the field alone
                "findAndModify" -> WireServer.error(FIND_AND_MODIFY_UNKNOWN_FIELD, "Location$FIND_AND_MODIFY_UNKNOWN_FIELD", "BSON field 'let' is an unknown field.")
                else -> unknownField("$name.let")
            }
        }
        unsupportedIn(cmd, topLevel = true)?.let { return unknownField("$name.$it") }
        if (name in LISTINGS && (cmd["filter"] as? BsonDocument)?.isEmpty() == false) return unknownField("$name.filter")
        if (name == "create" && cmd["capped"]?.let { it.isBoolean && it.asBoolean().value } == true) return unknownField("create.capped")
        val pipelines = wireVersion >= PIPELINE_UPDATE_WIRE_VERSION
        if (name == "findAndModify" && cmd["update"] is BsonArray) {
            if (!pipelines) return pipelineUpdate("findAndModify.update")
            PipelineUpdates.refusal(cmd["update"] as BsonArray)?.let { return it }
        }
        val array = STATEMENTS[name] ?: return null
        for (statement in cmd[array] as? BsonArray ?: return null) {
            (statement as? BsonDocument)?.let { unsupportedIn(it, topLevel = false) }?.let { return unknownField("$name.$array.$it") }
            val u = (statement as? BsonDocument)?.get("u")
            if (name == "update" && u is BsonArray) {
                if (!pipelines) return pipelineUpdate("update.updates.u")
                // mongod parses an update pipeline with the command: a stage an update does not allow fails the whole command
                PipelineUpdates.refusal(u)?.let { return it }
            }
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

    /** The unsupported option of [doc] (a command when [topLevel], else one of its statements), or null. */
    private fun unsupportedIn(doc: BsonDocument, topLevel: Boolean): String? = when {
        // a command's `let` is bound by the test kit (LetVariables); a statement has no such field
        !topLevel && doc.containsKey("let") -> "let"
        doc.keys.firstOrNull() == "find" && FIND_OPTIONS.any { doc[it]?.let { v -> v.isBoolean && v.asBoolean().value } == true } ->
            FIND_OPTIONS.first { doc[it]?.let { v -> v.isBoolean && v.asBoolean().value } == true }
        (doc["collation"] as? BsonDocument)?.let { !isSimple(it) } == true -> "collation"
        else -> null
    }

    /** The simple binary comparison, which the engine does: `{locale: "simple"}`. */
    private fun isSimple(collation: BsonDocument) = collation.keys == setOf("locale") && collation["locale"] == BsonString("simple")

    private fun unknownField(path: String) = WireServer.error(UNKNOWN_FIELD, "Location$UNKNOWN_FIELD", "BSON field '$path' is an unknown field.")
}
