package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonNumber
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue

/**
 * Just enough of insert/find/update/delete/drop/listDatabases for tests: documents per namespace in
 * insertion order, top-level equality filters (plus the `$where: "sleep(N) || true"` clause, see
 * [WhereSleep]). A filter that is exactly `{_id: value}` is answered from an index on `_id`, as
 * on mongod (a scan would grow with every insert, and every command of the server waits for it).
 * Thread-safe (one lock per server).
 */
class InMemoryCollections {
    private val data = HashMap<String, Namespace>()

    /** A copy of the documents in [db].[collection]. */
    @Synchronized
    fun documents(db: String, collection: String): List<BsonDocument> = data["$db.$collection"]?.docs?.map { it.clone() } ?: emptyList()

    @Synchronized
    internal fun insert(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("insert").value
        val docs = cmd["documents"]?.takeIf { it.isArray }?.asArray() ?: return badValue("insert needs documents")
        val ns = data.getOrPut("$db.$coll") { Namespace() }
        for (d in docs) {
            val doc = d.asDocument().clone()
            if (!doc.containsKey("_id")) {
                val withId = BsonDocument("_id", BsonObjectId())
                withId.putAll(doc)
                ns.add(withId)
            } else {
                ns.add(doc)
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
            val ns = data["$db.$coll"]
            val id = filter["_id"]?.takeIf { filter.size == 1 }
            when {
                ns == null -> emptyList()
                id != null -> ns.withId(id).take(limit)
                else -> ns.docs.asSequence().filter { matches(it, filter) }.take(limit).toList()
            }
        } catch (e: IllegalArgumentException) {
            return badValue(e.message ?: "bad filter")
        }
        val cursor = BsonDocument("firstBatch", BsonArray(hits.map { it.clone() }))
            .append("id", BsonInt64(0))
            .append("ns", BsonString("$db.$coll"))
        return BsonDocument("cursor", cursor).append("ok", BsonInt32(1))
    }

    /**
     * `update` with `updates: [{q, u, multi?, upsert?}]`: `u` is a replacement document or uses
     * `$set` and `$inc` only (other operators are BadValue); an upsert inserts the filter's fields plus the
     * update. Replies `{n, nModified, upserted?, ok: 1}` as mongod does.
     */
    @Synchronized
    internal fun update(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("update").value
        val updates = cmd["updates"]?.takeIf { it.isArray }?.asArray() ?: return badValue("update needs updates")
        val ns = data.getOrPut("$db.$coll") { Namespace() }
        val list = ns.docs
        var n = 0
        var modified = 0
        val upserted = BsonArray()
        for ((index, entry) in updates.withIndex()) {
            val spec = entry.takeIf { it.isDocument }?.asDocument() ?: return badValue("each update must be a document")
            val q = spec["q"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument()
            val u = spec["u"]?.takeIf { it.isDocument }?.asDocument() ?: return badValue("update needs u")
            val operators = u.keys.any { it.startsWith("$") }
            if (operators && u.keys.any { it != "\$set" && it != "\$inc" }) return badValue("only \$set and \$inc are supported, got ${u.keys}")
            if (u["\$inc"]?.let { inc -> !inc.isDocument || inc.asDocument().values.any { !it.isNumber } } == true) return badValue("\$inc needs numbers")
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
                ns.replace(i, after)
            }
            n += hits.size
            if (hits.isEmpty() && spec["upsert"]?.let { it.isBoolean && it.asBoolean().value } == true) {
                val seed = BsonDocument().also { d -> q.forEach { (k, v) -> if (!k.startsWith("$")) d[k] = v } }
                val doc = applied(seed, u, operators).let { if (it.containsKey("_id")) it else BsonDocument("_id", BsonObjectId()).apply { putAll(it) } }
                ns.add(doc)
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
            doc.clone().also { d ->
                u["\$set"]?.asDocument()?.forEach { (k, v) -> d[k] = v }
                u["\$inc"]?.asDocument()?.forEach { (k, v) -> d[k] = incremented(d[k], v.asNumber()) }
            }
        } else {
            BsonDocument().also { d -> doc["_id"]?.let { d["_id"] = it }; u.forEach { (k, v) -> if (k != "_id") d[k] = v } }
        }

    /** `$inc`: int32 + int32 stays int32 (as on mongod, widened to int64 on overflow), a double makes a double, else int64. */
    private fun incremented(current: BsonValue?, by: BsonNumber): BsonValue {
        val now = current?.takeIf { it.isNumber }?.asNumber() ?: return by
        return when {
            now is BsonDouble || by is BsonDouble -> BsonDouble(now.doubleValue() + by.doubleValue())
            now is BsonInt32 && by is BsonInt32 -> (now.longValue() + by.longValue()).let { if (it in Int.MIN_VALUE..Int.MAX_VALUE) BsonInt32(it.toInt()) else BsonInt64(it) }
            else -> BsonInt64(now.longValue() + by.longValue())
        }
    }

    @Synchronized
    internal fun delete(db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd.getString("delete").value
        val deletes = cmd["deletes"]?.takeIf { it.isArray }?.asArray() ?: return badValue("delete needs deletes")
        val ns = data["$db.$coll"] ?: Namespace()
        var n = 0
        for (d in deletes) {
            val q = d.asDocument()["q"]?.asDocument() ?: BsonDocument()
            val limit = d.asDocument()["limit"]?.asNumber()?.intValue() ?: 0
            var removed = 0
            ns.removeWhile { doc ->
                (limit == 0 || removed < limit) && matches(doc, q).also { if (it) removed++ }
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

    /** One namespace's documents in insertion order, with an index from `_id` to the documents carrying it. Guarded by the outer lock. */
    private class Namespace {
        private val list = ArrayList<BsonDocument>()
        private val byId = HashMap<BsonValue, MutableList<BsonDocument>>()

        val docs: List<BsonDocument> get() = list

        fun add(doc: BsonDocument) {
            list.add(doc)
            index(doc)
        }

        fun replace(i: Int, doc: BsonDocument) {
            unindex(list[i])
            list[i] = doc
            index(doc)
        }

        /** Removes, in insertion order, the documents [remove] accepts. */
        fun removeWhile(remove: (BsonDocument) -> Boolean) {
            val it = list.iterator()
            while (it.hasNext()) {
                val doc = it.next()
                if (remove(doc)) { it.remove(); unindex(doc) }
            }
        }

        /** The documents whose `_id` equals [id], in insertion order. */
        fun withId(id: BsonValue): List<BsonDocument> {
            val same = byId[id] ?: return emptyList()
            return if (same.size == 1) listOf(same[0]) else list.filter { it["_id"] == id }
        }

        private fun index(doc: BsonDocument) {
            doc["_id"]?.let { byId.getOrPut(it) { ArrayList(1) }.add(doc) }
        }

        private fun unindex(doc: BsonDocument) {
            val id = doc["_id"] ?: return
            val same = byId[id] ?: return
            same.removeIf { it === doc }
            if (same.isEmpty()) byId.remove(id)
        }
    }
}
