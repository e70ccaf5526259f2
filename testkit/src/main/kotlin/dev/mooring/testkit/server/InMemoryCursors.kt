package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import java.util.concurrent.atomic.AtomicLong

/**
 * Server-side cursors of the in-memory collections: a result larger than the command's
 * `batchSize` leaves the rest here under a fresh non-zero id, for `getMore` (with its own
 * `batchSize`) and `killCursors`. Thread-safe (guarded by the owning [InMemoryCollections]).
 */
internal class InMemoryCursors {
    private class Open(val ns: String, val rest: ArrayDeque<BsonDocument>)

    private val open = HashMap<Long, Open>()
    private val ids = AtomicLong()

    /** The `{cursor: {firstBatch, id, ns}, ok: 1}` reply for [docs], keeping what exceeds [batchSize] (null or 0: all). */
    fun first(ns: String, docs: List<BsonDocument>, batchSize: Int?): BsonDocument {
        val size = batchSize?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val id = if (docs.size > size) ids.incrementAndGet().also { open[it] = Open(ns, ArrayDeque(docs.drop(size))) } else 0L
        return reply("firstBatch", ns, docs.take(size), id)
    }

    /** `getMore` on [db]: the next batch of the cursor, or CursorNotFound (43). */
    fun getMore(db: String, cmd: BsonDocument): BsonDocument {
        val id = cmd["getMore"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: return err(14, "TypeMismatch", "getMore needs a cursor id")
        val coll = cmd["collection"]?.takeIf { it.isString }?.asString()?.value ?: return err(14, "TypeMismatch", "getMore needs a collection")
        val cursor = open[id]?.takeIf { it.ns == "$db.$coll" } ?: return err(43, "CursorNotFound", "cursor id $id not found")
        val size = cmd["batchSize"]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val batch = ArrayList<BsonDocument>()
        while (batch.size < size && cursor.rest.isNotEmpty()) batch.add(cursor.rest.removeFirst())
        val next = if (cursor.rest.isEmpty()) 0L.also { open.remove(id) } else id
        return reply("nextBatch", cursor.ns, batch, next)
    }

    /** `killCursors`: forgets the named cursors and reports which were found. */
    fun kill(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd["killCursors"]?.takeIf { it.isString }?.asString()?.value ?: return err(14, "TypeMismatch", "killCursors needs a collection")
        val requested = cmd["cursors"]?.takeIf { it.isArray }?.asArray()?.filter { it.isNumber }?.map { it.asNumber().longValue() }
            ?: return err(14, "TypeMismatch", "killCursors needs cursors")
        val (killed, notFound) = requested.partition { open[it]?.ns == "$db.$coll" }
        killed.forEach { open.remove(it) }
        return BsonDocument("cursorsKilled", BsonArray(killed.map { BsonInt64(it) }))
            .append("cursorsNotFound", BsonArray(notFound.map { BsonInt64(it) }))
            .append("cursorsAlive", BsonArray()).append("cursorsUnknown", BsonArray())
            .append("ok", BsonInt32(1))
    }

    private fun reply(field: String, ns: String, docs: List<BsonDocument>, id: Long) =
        BsonDocument("cursor", BsonDocument(field, BsonArray(docs.map { it.clone() })).append("id", BsonInt64(id)).append("ns", BsonString(ns)))
            .append("ok", BsonInt32(1))

    private fun err(code: Int, name: String, msg: String) = WireServer.error(code, name, msg)
}
