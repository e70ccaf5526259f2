package dev.mooring.sdam.internal.tracing

import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings

/** Command span attributes read from a command document and its reply (open-telemetry.md). Pure; thread-safe. */
internal object CommandAttributes {
    /** Fields that never appear in `db.query.text`. */
    private val HIDDEN = setOf("lsid", "\$db", "\$clusterTime", "signature")
    private val RELAXED: JsonWriterSettings = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build()

    /**
     * Commands whose first value is a string that names no collection (a user or a role): no
     * `db.collection.name` for them.
     */
    private val NOT_ON_A_COLLECTION = setOf(
        "createuser", "updateuser", "dropuser", "usersinfo", "grantrolestouser", "revokerolesfromuser",
        "createrole", "updaterole", "droprole", "rolesinfo", "grantrolestorole", "revokerolesfromrole",
        "grantprivilegestorole", "revokeprivilegesfromrole",
    )

    /**
     * The collection the command targets, never for `admin`: a getMore's `collection` field, else
     * the command's first value when it is a (non-empty) string, except for user and role commands.
     */
    fun collection(database: String, command: BsonDocument): String? {
        if (database == "admin" || command.isEmpty()) return null
        val name = command.firstKey
        if (name.lowercase() in NOT_ON_A_COLLECTION) return null
        val target = if (name == "getMore") command["collection"] else command[name]
        return if (target != null && target.isString && target.asString().value.isNotEmpty()) target.asString().value else null
    }

    /** A getMore's or killCursors' cursor id. */
    fun cursorId(command: BsonDocument): Long? = when (command.keys.firstOrNull()) {
        "getMore" -> command["getMore"]?.asLongOrNull()
        "killCursors" -> command["cursors"]?.takeIf { it.isArray }?.asArray()?.singleOrNull()?.asLongOrNull()
        else -> null
    }

    /** The id of the cursor a reply returns, when it is not 0. */
    fun replyCursorId(reply: BsonDocument): Long? =
        reply["cursor"]?.takeIf { it.isDocument }?.asDocument()?.get("id")?.asLongOrNull()?.takeIf { it != 0L }

    /** The logical session id (`lsid.id`) as a UUID string, or its JSON when it is not a UUID. */
    fun lsid(command: BsonDocument): String? {
        val id = command["lsid"]?.takeIf { it.isDocument }?.asDocument()?.get("id") ?: return null
        return if (id.isBinary && id.asBinary().data.size == 16) id.asBinary().asUuid().toString() else id.toString()
    }

    fun txnNumber(command: BsonDocument): Long? = command["txnNumber"]?.asLongOrNull()

    /**
     * The command as relaxed extended JSON without [HIDDEN]; when longer than [maxLength] UTF-16
     * code units, truncated as logging.md truncates documents (open-telemetry.md "db.query.text":
     * "similar to the Logging specification"): cut at [maxLength], never inside a surrogate pair,
     * with a trailing `...` that does not count toward the length.
     */
    fun queryText(command: BsonDocument, maxLength: Int): String {
        val shown = BsonDocument().also { d -> command.forEach { (k, v) -> if (k !in HIDDEN) d[k] = v } }
        val json = shown.toJson(RELAXED)
        if (json.length <= maxLength) return json
        // (BSON's JSON writer escapes characters outside the BMP, so this guard is for safety only)
        val end = if (maxLength > 0 && Character.isHighSurrogate(json[maxLength - 1])) maxLength - 1 else maxLength
        return json.substring(0, end) + "..."
    }

    private fun BsonValue.asLongOrNull(): Long? = if (isNumber) asNumber().longValue() else null

}
