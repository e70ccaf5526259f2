package dev.mooring.testkit.server

import kotlinx.coroutines.delay
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue
import java.util.concurrent.atomic.AtomicLong

/**
 * The open cursors of one server, as mongod keeps them: a cursor-returning reply (every result in
 * `firstBatch`, id 0) is split into a first batch of `batchSize` (find: `batchSize`; aggregate,
 * listCollections, listIndexes: `cursor.batchSize`; default 101 as on mongod) and the rest stays
 * on the server under a fresh cursor id until `getMore`s drain it or `killCursors` kills it.
 *
 * A cursor belongs to the [owner] it was opened by (a load balancer's backend; 0 elsewhere): a
 * `getMore` or `killCursors` from another owner, or for an unknown id, is CursorNotFound (43). A
 * `getMore` for another collection is Unauthorized (13), as on mongod. A `tailable` find cursor
 * stays open when drained: a later getMore returns the documents inserted since (with
 * `awaitData`, it waits up to the getMore's `maxTimeMS`, default 1 s, for one).
 *
 * Thread-safe (one lock; the awaitData wait polls outside it).
 */
class ServerCursors {
    private class Open(
        val ns: String,
        val owner: Int,
        val remaining: ArrayDeque<BsonDocument>,
        /** For a tailable cursor: how to find the documents after the [returned] first ones. */
        val tail: ((Int) -> List<BsonDocument>)?,
        val awaitData: Boolean,
        var returned: Int,
    )

    private val open = HashMap<Long, Open>() // guarded by this
    private val ids = AtomicLong(4_000_000_000L)

    /** The number of cursors open on this server now. */
    val openCount: Int get() = synchronized(this) { open.size }

    /**
     * [reply] (a full `{cursor: {firstBatch, id: 0, ns}}` answer to [cmd], or an error, returned as
     * it is) cut to its first batch; the rest is kept for getMore under a new id owned by [owner].
     * [tail] re-reads a tailable find's results (see the class documentation).
     */
    fun open(cmd: BsonDocument, reply: BsonDocument, owner: Int, tail: ((Int) -> List<BsonDocument>)? = null): BsonDocument {
        val cursor = (reply["cursor"] as? BsonDocument) ?: return reply
        val all = cursor.getArray("firstBatch").map { it.asDocument() }
        val batchSize = batchSize(cmd) ?: return WireServer.error(2, "BadValue", "batchSize must not be negative")
        val single = cmd["singleBatch"]?.let { it.isBoolean && it.asBoolean().value } == true ||
            (cmd.firstKey == "find" && (cmd["limit"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 0) < 0)
        val tailable = tail != null && cmd["tailable"]?.let { it.isBoolean && it.asBoolean().value } == true
        val first = all.take(batchSize)
        val keep = !single && (all.size > first.size || tailable)
        val id = if (keep) ids.incrementAndGet() else 0L
        if (keep) {
            val awaitData = cmd["awaitData"]?.let { it.isBoolean && it.asBoolean().value } == true
            synchronized(this) { open[id] = Open(cursor.getString("ns").value, owner, ArrayDeque(all.drop(first.size)), tail.takeIf { tailable }, awaitData, all.size) }
        }
        return reply.clone().apply {
            put("cursor", BsonDocument("firstBatch", BsonArray(first)).append("id", BsonInt64(id)).append("ns", cursor.getString("ns")))
        }
    }

    /** `getMore` on [db] from [owner]. */
    suspend fun getMore(db: String, cmd: BsonDocument, owner: Int): BsonDocument {
        val id = cmd["getMore"]?.takeIf { it.isInt64 || it.isInt32 }?.asNumber()?.longValue()
            ?: return WireServer.error(14, "TypeMismatch", "Field 'getMore' must be of type long in: ${cmd["getMore"]}")
        val coll = cmd["collection"]?.takeIf { it.isString }?.asString()?.value
            ?: return WireServer.error(14, "TypeMismatch", "Field 'collection' must be of type string")
        val size = cmd["batchSize"]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val c = synchronized(this) { open[id]?.takeIf { it.owner == owner } } ?: return cursorNotFound(id)
        if (c.ns != "$db.$coll") return WireServer.error(13, "Unauthorized", "Requested getMore on namespace '$db.$coll', but cursor belongs to a different namespace ${c.ns}")
        if (c.tail != null && c.awaitData) awaitTail(c, cmd["maxTimeMS"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 1_000)
        val batch = synchronized(this) {
            if (open[id] !== c) return cursorNotFound(id)
            if (c.remaining.isEmpty()) refill(c)
            val out = ArrayList<BsonDocument>()
            while (out.size < size && c.remaining.isNotEmpty()) out.add(c.remaining.removeFirst())
            if (c.remaining.isEmpty() && c.tail == null) open.remove(id)
            out
        }
        val nextId = if (synchronized(this) { open.containsKey(id) }) id else 0L
        val cursor = BsonDocument("nextBatch", BsonArray(batch)).append("id", BsonInt64(nextId)).append("ns", BsonString(c.ns))
        return BsonDocument("cursor", cursor).append("ok", BsonInt32(1))
    }

    /** `killCursors` from [owner]: kills the listed cursors it owns, reports the others as not found. */
    fun killCursors(db: String, cmd: BsonDocument, owner: Int): BsonDocument {
        val listed = cmd["cursors"]?.takeIf { it.isArray }?.asArray()
            ?: return WireServer.error(14, "TypeMismatch", "Field 'cursors' must be of type array")
        val killed = BsonArray()
        val notFound = BsonArray()
        synchronized(this) {
            for (v in listed) {
                val id = v.takeIf { it.isNumber }?.asNumber()?.longValue()
                val c = id?.let { open[it] }
                if (c != null && c.owner == owner && c.ns.startsWith("$db.")) {
                    open.remove(id)
                    killed.add(v)
                } else {
                    notFound.add(v)
                }
            }
        }
        return BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound).append("cursorsAlive", BsonArray())
            .append("cursorsUnknown", BsonArray()).append("ok", BsonInt32(1))
    }

    /** Waits (polling, outside the lock) until a drained tailable cursor has new documents or [maxTimeMS] passed. */
    private suspend fun awaitTail(c: Open, maxTimeMS: Long) {
        val deadline = System.nanoTime() + maxTimeMS * 1_000_000
        while (System.nanoTime() < deadline) {
            if (synchronized(this) { c.remaining.isNotEmpty() || refill(c) }) return
            delay(POLL_MS)
        }
    }

    /** Under the lock: moves a tailable cursor's new documents into its batch; true when there were any. */
    private fun refill(c: Open): Boolean {
        val fresh = c.tail?.invoke(c.returned) ?: return false
        c.remaining.addAll(fresh)
        c.returned += fresh.size
        return fresh.isNotEmpty()
    }

    private fun cursorNotFound(id: Long) = WireServer.error(43, "CursorNotFound", "cursor id $id not found")

    private fun batchSize(cmd: BsonDocument): Int? {
        val v: BsonValue? = if (cmd.firstKey == "find") cmd["batchSize"] else (cmd["cursor"] as? BsonDocument)?.get("batchSize")
        val n = v?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: return DEFAULT_BATCH
        return n.takeIf { it >= 0 }
    }

    private companion object {
        const val DEFAULT_BATCH = 101
        const val POLL_MS = 10L
    }
}
