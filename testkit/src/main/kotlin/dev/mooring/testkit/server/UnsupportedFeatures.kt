package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * The command options the test kit's data engine (mongo-java-server's memory backend) would
 * silently ignore, so a command using them would answer wrongly: a non-simple `collation` and
 * `let` variables. Such a command is refused as a server that does not know the option refuses
 * it: `BSON field '<command>.<path>' is an unknown field.` (40415, as MongoDB 4.4 answers `let`).
 * Pure.
 */
internal object UnsupportedFeatures {
    private const val UNKNOWN_FIELD = 40415

    /** Per command, the statement array whose entries may carry the options too. */
    private val STATEMENTS = mapOf("update" to "updates", "delete" to "deletes")

    /** The refusal of [cmd], or null when the engine supports everything it asks for. */
    fun refusal(cmd: BsonDocument): BsonDocument? {
        val name = cmd.firstKey
        unsupportedIn(cmd)?.let { return unknownField("$name.$it") }
        val array = STATEMENTS[name] ?: return null
        for (statement in cmd[array] as? BsonArray ?: return null) {
            (statement as? BsonDocument)?.let(::unsupportedIn)?.let { return unknownField("$name.$array.$it") }
        }
        return null
    }

    /** The unsupported option of [doc], or null. */
    private fun unsupportedIn(doc: BsonDocument): String? = when {
        doc.containsKey("let") -> "let"
        (doc["collation"] as? BsonDocument)?.let { !isSimple(it) } == true -> "collation"
        else -> null
    }

    /** The simple binary comparison, which the engine does: `{locale: "simple"}`. */
    private fun isSimple(collation: BsonDocument) = collation.keys == setOf("locale") && collation["locale"] == BsonString("simple")

    private fun unknownField(path: String) = WireServer.error(UNKNOWN_FIELD, "Location$UNKNOWN_FIELD", "BSON field '$path' is an unknown field.")
}
