package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString

/**
 * Just enough of insert/find/delete/drop/listDatabases for tests: documents per namespace in insertion
 * order, top-level equality filters. Thread-safe (one lock per server).
 */
class InMemoryCollections {
    private val data = HashMap<String, MutableList<BsonDocument>>()

    /** A copy of the documents in [db].[collection]. */
    @Synchronized
    fun documents(db: String, collection: String): List<BsonDocument> = data["$db.$collection"]?.map { it.clone() } ?: emptyList()

    @Synchronized
    internal fun insert(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("insert").value
        val docs = cmd["documents"]?.takeIf { it.isArray }?.asArray() ?: return badValue("insert needs documents")
        val list = data.getOrPut("$db.$coll") { ArrayList() }
        for (d in docs) {
            val doc = d.asDocument().clone()
            if (!doc.containsKey("_id")) {
                val withId = BsonDocument("_id", BsonObjectId())
                withId.putAll(doc)
                list.add(withId)
            } else {
                list.add(doc)
            }
        }
        return BsonDocument("n", BsonInt32(docs.size)).append("ok", BsonInt32(1))
    }

    @Synchronized
    internal fun find(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("find").value
        val filter = cmd["filter"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument()
        val limit = cmd["limit"]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val hits = (data["$db.$coll"] ?: emptyList<BsonDocument>()).filter { matches(it, filter) }.take(limit)
        val cursor = BsonDocument("firstBatch", BsonArray(hits.map { it.clone() }))
            .append("id", BsonInt64(0))
            .append("ns", BsonString("$db.$coll"))
        return BsonDocument("cursor", cursor).append("ok", BsonInt32(1))
    }

    @Synchronized
    internal fun delete(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("delete").value
        val deletes = cmd["deletes"]?.takeIf { it.isArray }?.asArray() ?: return badValue("delete needs deletes")
        val list = data["$db.$coll"] ?: ArrayList()
        var n = 0
        for (d in deletes) {
            val q = d.asDocument()["q"]?.asDocument() ?: BsonDocument()
            val limit = d.asDocument()["limit"]?.asNumber()?.intValue() ?: 0
            val it = list.iterator()
            var removed = 0
            while (it.hasNext() && (limit == 0 || removed < limit)) {
                if (matches(it.next(), q)) { it.remove(); removed++ }
            }
            n += removed
        }
        return BsonDocument("n", BsonInt32(n)).append("ok", BsonInt32(1))
    }

    @Synchronized
    internal fun drop(db: String, cmd: BsonDocument): BsonDocument {
        data.remove("$db.${cmd.getString("drop").value}")
        return BsonDocument("ok", BsonInt32(1))
    }

    /** `listDatabases`: every database holding a collection, with `sizeOnDisk` 0 (the filter is ignored). */
    @Synchronized
    internal fun listDatabases(): BsonDocument {
        val names = data.keys.map { it.substringBefore('.') }.distinct().sorted()
        val dbs = names.map { BsonDocument("name", BsonString(it)).append("sizeOnDisk", BsonInt64(0)).append("empty", org.bson.BsonBoolean.FALSE) }
        return BsonDocument("databases", BsonArray(dbs)).append("totalSize", BsonInt64(0)).append("ok", BsonInt32(1))
    }

    private fun matches(doc: BsonDocument, filter: BsonDocument) = filter.all { (k, v) -> doc[k] == v }

    private fun badValue(msg: String) =
        BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString(msg)).append("code", BsonInt32(2)).append("codeName", BsonString("BadValue"))
}
