package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * MongoDB before 5.0 does not store a field name starting with `$` ([SINCE]): an inserted
 * document with one at its top level is BadValue (2), `Document can't have $ prefixed field
 * names: <name>`; a replacement (of update or findAndModify) with one at any depth is
 * DollarPrefixedFieldName (52), `The dollar ($) prefixed field '<name>' in '<path>' is not valid
 * for storage.` The fields of a DBRef (`$ref`, `$id`, `$db`) are stored by every release. The
 * data engine stores such names, as 5.0+ does; an older simulated server refuses them here.
 * Checked per statement ([refusal] of a one-statement write or a findAndModify), so an insert or
 * update answers a write error at the statement's index. Pure.
 */
internal object DollarPrefixedFieldNames {
    /** The first release that stores dollar-prefixed field names. */
    val SINCE = ServerVersion(5, 0)

    private val DB_REF_FIELDS = setOf("\$ref", "\$id", "\$db")

    /** The refusal of [cmd] (a one-statement insert or update, or a findAndModify) by [version], or null. */
    fun refusal(cmd: BsonDocument, version: ServerVersion): BsonDocument? {
        if (version >= SINCE) return null
        return when (cmd.keys.firstOrNull()) {
            "insert" -> (cmd["documents"] as? BsonArray)?.firstNotNullOfOrNull { doc ->
                (doc as? BsonDocument)?.keys?.firstOrNull { isDollar(it) }?.let {
                    WireServer.error(BAD_VALUE, "BadValue", "Document can't have \$ prefixed field names: $it")
                }
            }
            "update" -> (cmd["updates"] as? BsonArray)?.firstNotNullOfOrNull { s -> replacementRefusal((s as? BsonDocument)?.get("u") as? BsonDocument) }
            "findAndModify" -> replacementRefusal(cmd["update"] as? BsonDocument)
            else -> null
        }
    }

    /** The refusal of [replacement] (null or an update with operators: none) for a dollar-prefixed name at any depth. */
    private fun replacementRefusal(replacement: BsonDocument?): BsonDocument? {
        if (replacement == null || replacement.keys.firstOrNull()?.startsWith("$") == true) return null
        val path = dollarPath(replacement, "") ?: return null
        return WireServer.error(DOLLAR_PREFIXED_FIELD_NAME, "DollarPrefixedFieldName", "The dollar (\$) prefixed field '${path.substringAfterLast('.')}' in '$path' is not valid for storage.")
    }

    /** The dotted path of the first dollar-prefixed name in [doc] (under [prefix]), or null. */
    private fun dollarPath(doc: BsonDocument, prefix: String): String? {
        for ((name, value) in doc) {
            val path = if (prefix.isEmpty()) name else "$prefix.$name"
            if (isDollar(name)) return path
            val nested = when (value) {
                is BsonDocument -> dollarPath(value, path)
                is BsonArray -> value.withIndex().firstNotNullOfOrNull { (i, v) -> (v as? BsonDocument)?.let { dollarPath(it, "$path.$i") } }
                else -> null
            }
            if (nested != null) return nested
        }
        return null
    }

    private fun isDollar(name: String) = name.startsWith("$") && name !in DB_REF_FIELDS

    private const val BAD_VALUE = 2
    private const val DOLLAR_PREFIXED_FIELD_NAME = 52
}
