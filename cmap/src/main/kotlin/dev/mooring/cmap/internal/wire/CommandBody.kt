package dev.mooring.cmap.internal.wire

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.RawBsonDocument
import org.bson.BsonValue
import org.bson.io.BasicOutputBuffer

/**
 * The fields a connection sets on every command it sends (`$db` and the Stable API fields,
 * versioned-api.md), written by the encoder after the command's own fields instead of being
 * copied into it. Immutable; a connection keeps one per database.
 */
internal class BodyTrailer(private val names: Array<String>, private val values: Array<BsonValue>) {
    /** The value set for [name], or null. */
    fun get(name: String): BsonValue? {
        for (i in names.indices) if (names[i] == name) return values[i]
        return null
    }

    val size: Int get() = names.size

    fun name(i: Int): String = names[i]

    fun value(i: Int): BsonValue = values[i]
}

/**
 * An OP_MSG body as sent: the command (an [AppendedCommand] is read from its parts) with a
 * [BodyTrailer]'s fields set on it, exactly as `command.clone()` with each of them `put` would
 * read: a field the command already has keeps its position and takes the new value, the others
 * follow in order. Stateless; thread-safe.
 */
internal object CommandBody {
    /** The command name: the body's first key. */
    fun firstKey(body: BsonDocument, trailer: BodyTrailer?): String = when {
        !body.isEmpty() -> body.firstKey
        trailer != null && trailer.size > 0 -> trailer.name(0)
        else -> ""
    }

    /** True when [name] is a field of the body as sent. */
    fun contains(body: BsonDocument, trailer: BodyTrailer?, name: String): Boolean = trailer?.get(name) != null || body.containsKey(name)

    /** The body as sent as a plain document (a new one; nested values are shared): for command monitoring. */
    fun asSent(body: BsonDocument, trailer: BodyTrailer?): BsonDocument {
        if (trailer == null && body !is AppendedCommand) return body
        val d = BsonDocument()
        val app = body as? AppendedCommand
        if (app != null && app.isLazy) {
            for ((k, v) in app.base.entries) d[k] = v
            app.forEachAppended { k, v -> d[k] = v }
        } else {
            for ((k, v) in body.entries) d[k] = v
        }
        if (trailer != null) for (i in 0 until trailer.size) d[trailer.name(i)] = trailer.value(i)
        return d
    }

    /**
     * About the bytes of the encoded documents ([RawBsonDocument]s) the command carries in its
     * top-level arrays, directly (an insert's `documents`) or as a field of an array's documents
     * (a bulkWrite's `ops` entries' `document`), plus per such document room for its entry: what
     * an encode buffer needs besides the command's own small fields, at most [maxMessageSizeBytes].
     * An array whose first element carries a document of at least [LARGE_DOCUMENT] bytes is
     * counted element by element; any other is estimated as its first element's bytes times its
     * length (a batch's documents tend to be alike; a pass over many small ones would cost more
     * than the buffer growing once when the estimate is short). Only those two levels are
     * visited; nothing is encoded.
     */
    fun carriedBytes(body: BsonDocument, maxMessageSizeBytes: Int = Int.MAX_VALUE): Int {
        val base = (body as? AppendedCommand)?.takeIf { it.isLazy }?.base ?: body
        var bytes = 0L
        for (v in base.values) {
            if (v !is BsonArray || v.isEmpty()) continue
            val items = v.values
            val first = carried(items[0])
            if (first == 0L) continue
            if (first < LARGE_DOCUMENT) {
                bytes += first * items.size
                continue
            }
            for (item in items) bytes += carried(item)
        }
        return bytes.coerceAtMost(maxMessageSizeBytes.toLong()).toInt()
    }

    /** The bytes [item] (an array element) carries as encoded documents, with their entry's room. */
    private fun carried(item: BsonValue): Long = when (item) {
        is RawBsonDocument -> item.byteBuffer.remaining().toLong() + ENTRY_ROOM
        is BsonDocument -> {
            var n = 0L
            for (field in item.values) if (field is RawBsonDocument) n += field.byteBuffer.remaining() + ENTRY_ROOM
            n
        }
        else -> 0L
    }

    /** An array element's type byte, index and NUL, and a bulkWrite entry's other fields. */
    private const val ENTRY_ROOM = 48

    /** The size from which a carried document makes its array count ([carriedBytes]). */
    const val LARGE_DOCUMENT = 16 * 1024

    /** Writes the body as sent into [out] (a top-level document, see [BsonOut]); nothing is copied. */
    fun write(out: BasicOutputBuffer, body: BsonDocument, trailer: BodyTrailer?) {
        val app = (body as? AppendedCommand)?.takeIf { it.isLazy }
        if (app == null && trailer == null) {
            BsonOut.document(out, body, 0)
            return
        }
        val base = app?.base ?: body
        val start = BsonOut.startDocument(out, 0)
        for ((k, v) in base.entries) BsonOut.element(out, k, trailer?.get(k) ?: app?.appended(k) ?: v, 0)
        if (app != null) {
            var i = 0
            app.forEachAppended { k, _ ->
                if (!base.containsKey(k) && !app.appendedBefore(k, i)) BsonOut.element(out, k, trailer?.get(k) ?: app.appended(k)!!, 0)
                i++
            }
        }
        if (trailer != null) {
            for (i in 0 until trailer.size) {
                val k = trailer.name(i)
                if (!base.containsKey(k) && app?.appended(k) == null) BsonOut.element(out, k, trailer.value(i), 0)
            }
        }
        BsonOut.endDocument(out, start)
    }
}
