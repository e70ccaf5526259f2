package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString

/**
 * Just enough of insert/find/update/delete/drop/listDatabases (and, through [CursorQueries],
 * aggregate/listCollections/listIndexes) for tests: documents per namespace in
 * insertion order, top-level equality filters (plus the `$where: "sleep(N) || true"` clause, see
 * [WhereSleep]). Thread-safe (one lock per server).
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
        val hits = try {
            matches(BsonDocument(), filter) // validates the filter even when the collection is empty
            (data["$db.$coll"] ?: emptyList<BsonDocument>()).filter { matches(it, filter) }.take(limit)
        } catch (e: IllegalArgumentException) {
            return badValue(e.message ?: "bad filter")
        }
        return CursorQueries.cursorReply(hits, "$db.$coll")
    }

    /** The names of [db]'s collections, sorted. */
    @Synchronized
    internal fun collectionNames(db: String): List<String> =
        data.keys.filter { it.startsWith("$db.") }.map { it.substring(db.length + 1) }.sorted()

    /** The documents of [docs] that match [filter] (as `find` filters; throws IllegalArgumentException for a bad filter). */
    internal fun filterDocuments(docs: List<BsonDocument>, filter: BsonDocument): List<BsonDocument> {
        matches(BsonDocument(), filter)
        return docs.filter { matches(it, filter) }
    }

    /**
     * `update` with `updates: [{q, u, multi?, upsert?}]`: `u` is a replacement document or uses
     * `$set` only (other operators are BadValue); an upsert inserts the filter's fields plus the
     * update. Replies `{n, nModified, upserted?, ok: 1}` as mongod does.
     */
    @Synchronized
    internal fun update(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("update").value
        val updates = cmd["updates"]?.takeIf { it.isArray }?.asArray() ?: return badValue("update needs updates")
        val list = data.getOrPut("$db.$coll") { ArrayList() }
        var n = 0
        var modified = 0
        val upserted = BsonArray()
        for ((index, entry) in updates.withIndex()) {
            val spec = entry.takeIf { it.isDocument }?.asDocument() ?: return badValue("each update must be a document")
            val q = spec["q"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument()
            val u = spec["u"]?.takeIf { it.isDocument }?.asDocument() ?: return badValue("update needs u")
            val operators = u.keys.any { it.startsWith("$") }
            if (operators && u.keys.any { it != "\$set" }) return badValue("only \$set is supported, got ${u.keys}")
            val multi = spec["multi"]?.let { it.isBoolean && it.asBoolean().value } == true
            val hits = try {
                list.indices.filter { matches(list[it], q) }.let { if (multi) it else it.take(1) }
            } catch (e: IllegalArgumentException) {
                return badValue(e.message ?: "bad filter")
            }
            for (i in hits) {
                val before = list[i]
                val after = applied(before, u, operators)
                if (after != before) modified++
                list[i] = after
            }
            n += hits.size
            if (hits.isEmpty() && spec["upsert"]?.let { it.isBoolean && it.asBoolean().value } == true) {
                val seed = BsonDocument().also { d -> q.forEach { (k, v) -> if (!k.startsWith("$")) d[k] = v } }
                val doc = applied(seed, u, operators).let { if (it.containsKey("_id")) it else BsonDocument("_id", BsonObjectId()).apply { putAll(it) } }
                list.add(doc)
                upserted.add(BsonDocument("index", BsonInt32(index)).append("_id", doc["_id"]))
                n++
            }
        }
        val reply = BsonDocument("n", BsonInt32(n)).append("nModified", BsonInt32(modified))
        if (upserted.isNotEmpty()) reply["upserted"] = upserted
        return reply.append("ok", BsonInt32(1))
    }

    private fun applied(doc: BsonDocument, u: BsonDocument, operators: Boolean): BsonDocument =
        if (operators) {
            doc.clone().also { d -> u.getDocument("\$set").forEach { (k, v) -> d[k] = v } }
        } else {
            BsonDocument().also { d -> doc["_id"]?.let { d["_id"] = it }; u.forEach { (k, v) -> if (k != "_id") d[k] = v } }
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

    /**
     * Top-level equality, `$and`/`$or`/`$nor` over arrays of filters, and the `$where` sleep. Any
     * other top-level operator, or a logical operator without an array, is a BadValue as on mongod
     * (thrown as IllegalArgumentException and turned into the reply by the caller).
     */
    private fun matches(doc: BsonDocument, filter: BsonDocument): Boolean = filter.all { (k, v) ->
        when (k) {
            "\$where" -> {
                require(v.isString && WhereSleep.isSupported(v.asString().value)) { "unsupported \$where $v" }
                true
            }
            "\$and", "\$or", "\$nor" -> {
                require(v.isArray && v.asArray().isNotEmpty() && v.asArray().all { it.isDocument }) { "$k must be a nonempty array of documents" }
                val results = v.asArray().map { matches(doc, it.asDocument()) }
                when (k) {
                    "\$and" -> results.all { it }
                    "\$or" -> results.any { it }
                    else -> results.none { it }
                }
            }
            else -> {
                require(!k.startsWith("\$")) { "unknown top level operator: $k" }
                doc[k] == v
            }
        }
    }

    private fun badValue(msg: String) =
        BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString(msg)).append("code", BsonInt32(2)).append("codeName", BsonString("BadValue"))
}
