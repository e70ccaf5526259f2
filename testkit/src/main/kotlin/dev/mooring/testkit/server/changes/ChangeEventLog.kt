package dev.mooring.testkit.server.changes

import dev.mooring.testkit.server.ClusterTimeKeeper
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonTimestamp

/**
 * The change events of one data set, in the order its writes were applied (what a replica set's
 * oplog gives mongod's change streams): each [Entry] has a [position] (1, 2, ...), from which its
 * resume token `{_data: hex}` is made ([token], [positionOf]), the cluster time of its write
 * ([clock]'s when the servers report cluster times, else a local count) and its namespace.
 * Recorded by [ChangeRecorder]; read by [ChangeStreamCursors]. Thread-safe.
 */
class ChangeEventLog {
    /**
     * One event: [event] is the change event without `_id` (operationType, clusterTime, wallTime,
     * ns, ...); [coll] is null for a database's event (dropDatabase); [expanded] marks the events
     * shown only with showExpandedEvents; [invalidates] marks a drop or rename of [coll], which
     * invalidates the streams on it; [before] and [after] are the document's images.
     */
    class Entry(
        val position: Long,
        val db: String,
        val coll: String?,
        val event: BsonDocument,
        val expanded: Boolean,
        val invalidates: Boolean,
        val before: BsonDocument?,
        val after: BsonDocument?,
    ) {
        val clusterTime: BsonTimestamp get() = event.getTimestamp("clusterTime")
    }

    private val entries = ArrayList<Entry>() // guarded by this

    /** The deployment's clock, when its servers report cluster times (set by the servers sharing this log). */
    @Volatile var clock: ClusterTimeKeeper? = null

    /** The position of the latest event, 0 before any. */
    val lastPosition: Long get() = synchronized(this) { entries.size.toLong() }

    /** Appends an event of [operationType] on [db].[coll] with [fields]; returns it. */
    @Synchronized
    fun append(
        db: String,
        coll: String?,
        operationType: String,
        fields: BsonDocument = BsonDocument(),
        expanded: Boolean = false,
        invalidates: Boolean = false,
        before: BsonDocument? = null,
        after: BsonDocument? = null,
    ): Entry {
        val position = entries.size + 1L
        val time = clock?.current()?.getTimestamp("clusterTime") ?: BsonTimestamp(EPOCH_SECONDS, position.toInt())
        val ns = BsonDocument("db", BsonString(db)).apply { coll?.let { put("coll", BsonString(it)) } }
        val event = BsonDocument("operationType", BsonString(operationType)).append("clusterTime", time)
            .append("wallTime", BsonDateTime(System.currentTimeMillis())).append("ns", ns)
        fields.forEach { (k, v) -> event[k] = v }
        return Entry(position, db, coll, event, expanded, invalidates, before, after).also { entries.add(it) }
    }

    /** The entries after [position], at most [max]. */
    @Synchronized
    fun after(position: Long, max: Int = Int.MAX_VALUE): List<Entry> =
        if (position >= entries.size) emptyList() else entries.subList(position.toInt(), minOf(entries.size.toLong(), position + max).toInt()).toList()

    /** The position before the first event at or after [time] (startAtOperationTime). */
    @Synchronized
    fun positionBefore(time: BsonTimestamp): Long {
        val i = entries.indexOfFirst { java.lang.Long.compareUnsigned(it.clusterTime.value, time.value) >= 0 }
        return if (i < 0) entries.size.toLong() else i.toLong()
    }

    companion object {
        private val EPOCH_SECONDS = (System.currentTimeMillis() / 1000).toInt()

        /** The resume token of the event at [position] (of its `invalidate` with [invalidate]). */
        fun token(position: Long, invalidate: Boolean = false): BsonDocument =
            BsonDocument("_data", BsonString(String.format("%016X%02X", position, if (invalidate) 1 else 0)))

        /** The position of a [token] of this log and whether it is an invalidate's, or null when it is not one. */
        fun positionOf(token: BsonDocument): Pair<Long, Boolean>? {
            val data = token["_data"]?.takeIf { it.isString }?.asString()?.value ?: return null
            if (data.length != 18) return null
            val position = data.substring(0, 16).toLongOrNull(16) ?: return null
            val kind = data.substring(16).toIntOrNull(16) ?: return null
            return position to (kind == 1)
        }
    }
}
