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

    /** The collection the command targets (its first value, when a string), never for `admin`. */
    fun collection(database: String, command: BsonDocument): String? {
        if (database == "admin" || command.isEmpty()) return null
        val first = command[command.firstKey]
        return if (first != null && first.isString && first.asString().value.isNotEmpty()) first.asString().value else null
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

    /** The command as relaxed extended JSON without [HIDDEN], cut to [maxLength] characters. */
    fun queryText(command: BsonDocument, maxLength: Int): String {
        val shown = BsonDocument().also { d -> command.forEach { (k, v) -> if (k !in HIDDEN) d[k] = v } }
        val json = shown.toJson(RELAXED)
        return if (json.length <= maxLength) json else json.substring(0, maxLength)
    }

    private fun BsonValue.asLongOrNull(): Long? = if (isNumber) asNumber().longValue() else null

}
