package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonNull
import org.bson.BsonObjectId
import org.bson.BsonString

/**
 * The data commands of the test kit's servers over in-memory collections (documents per
 * namespace in insertion order, a unique `_id`): insert, find (filter, sort, skip, limit,
 * projection, batchSize + getMore/killCursors), update (operators, upsert, multi), delete,
 * findAndModify, count, distinct, aggregate ([InMemoryAggregation]), create, drop,
 * createIndexes/dropIndexes/listIndexes, listCollections, listDatabases, the admin command
 * bulkWrite ([ClientBulkWriteCommand]), mapReduce with inline output ([InMemoryMapReduce]). Filters are
 * [DocumentQuery]'s, updates [DocumentUpdate]'s (plus the `$where: "sleep(N) || true"` clause,
 * see [WhereSleep]). Thread-safe (one lock per instance).
 */
class InMemoryCollections {
    private val data = HashMap<String, IdIndexedDocuments>()
    private val indexes = HashMap<String, MutableList<BsonDocument>>()
    private val cursors = InMemoryCursors()
    private val history = RetryableWriteHistory()

    /** A copy of the documents in [db].[collection]. */
    @Synchronized
    fun documents(db: String, collection: String): List<BsonDocument> = data["$db.$collection"]?.map { it.clone() } ?: emptyList()

    /**
     * Answers the data command [cmd] (its first key names it) on [db], or returns null when
     * [cmd] is not one of [COMMANDS]. A retryable write (`lsid` + `txnNumber`) runs statement by
     * statement, remembered for retries ([RetryableWriteHistory]), under the
     * `onPrimaryTransactionalWrite` [failPoint] if any: when it closes the connection,
     * [FailPointClosedConnection] is thrown.
     */
    @Synchronized
    fun execute(db: String, cmd: BsonDocument, failPoint: TransactionalWriteFailPoint? = null): BsonDocument? = try {
        if (RetryableWriteHistory.tracks(cmd)) history.run(cmd, failPoint) { one -> dispatch(db, one)!! } else dispatch(db, cmd, failPoint)
    } catch (e: IllegalArgumentException) {
        badValue(e.message ?: "bad value")
    } catch (e: FailPointStatementError) {
        FailCommandFailPoint.errorDocument(e.code, e.message!!)
    }

    /** [cmd] on [db]; a bulkWrite's statements run under the transactional-write [failPoint]. */
    private fun dispatch(db: String, cmd: BsonDocument, failPoint: TransactionalWriteFailPoint? = null): BsonDocument? =
        when (cmd.keys.firstOrNull()) {
            "insert" -> insert(db, cmd)
            "find" -> find(db, cmd)
            "update" -> update(db, cmd)
            "delete" -> delete(db, cmd)
            "findAndModify" -> findAndModify(db, cmd)
            "count" -> count(db, cmd)
            "distinct" -> distinct(db, cmd)
            "aggregate" -> aggregate(db, cmd)
            "getMore" -> cursors.getMore(db, cmd)
            "killCursors" -> cursors.kill(db, cmd)
            "create" -> create(db, cmd)
            "drop" -> drop(db, cmd)
            "dropDatabase" -> { data.keys.removeIf { it.startsWith("$db.") }; indexes.keys.removeIf { it.startsWith("$db.") }; ok() }
            "createIndexes" -> createIndexes(db, cmd)
            "dropIndexes" -> dropIndexes(db, cmd)
            "listIndexes" -> listIndexes(db, cmd)
            "listCollections" -> listCollections(db, cmd)
            "listDatabases" -> listDatabases(cmd)
            InMemoryMapReduce.NAME -> InMemoryMapReduce.execute(cmd, matching(db, name(cmd, InMemoryMapReduce.NAME), cmd["query"] as? BsonDocument ?: BsonDocument()))
            ClientBulkWriteCommand.NAME -> ClientBulkWriteCommand.execute(db, cmd, history, failPoint) { d, one -> dispatch(d, one)!! }
            else -> null
        }

    @Synchronized
    internal fun insert(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "insert")
        val docs = cmd["documents"]?.takeIf { it.isArray }?.asArray() ?: return badValue("insert needs documents")
        val ordered = cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true
        val list = collection(db, coll)
        val writeErrors = BsonArray()
        var n = 0
        for ((i, d) in docs.withIndex()) {
            val doc = d.asDocument().let { if (it.containsKey("_id")) it.clone() else BsonDocument("_id", BsonObjectId()).apply { putAll(it) } }
            if (list.containsId(doc["_id"]!!)) {
                writeErrors.add(duplicateKey(i, "$db.$coll", doc))
                if (ordered) break else continue
            }
            list.add(doc)
            n++
        }
        return withWriteErrors(BsonDocument("n", BsonInt32(n)), writeErrors)
    }

    @Synchronized
    internal fun find(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "find")
        val filter = cmd["filter"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument()
        val skip = intOf(cmd, "skip") ?: 0
        val limit = intOf(cmd, "limit")?.let { if (it < 0) -it else it }?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val single = cmd["singleBatch"]?.let { it.isBoolean && it.asBoolean().value } == true || (intOf(cmd, "limit") ?: 0) < 0
        val hits = DocumentQuery.sort(matching(db, coll, filter), cmd["sort"] as? BsonDocument)
            .drop(skip).take(limit).map { DocumentQuery.project(it, projection(cmd)) }
        val batch = if (single) hits.size.coerceAtLeast(1) else intOf(cmd, "batchSize")
        return cursors.first("$db.$coll", hits, batch)
    }

    /** A find's projection; `returnKey` returns the keys of the index used, always `_id` here (no other index is used). */
    private fun projection(cmd: BsonDocument): BsonDocument? =
        if (cmd["returnKey"]?.let { DocumentQuery.truthy(it) } == true) BsonDocument("_id", BsonInt32(1)) else cmd["projection"] as? BsonDocument

    /** The documents of [db].[coll] matching [filter] (validated even when the collection is empty). */
    internal fun matching(db: String, coll: String, filter: BsonDocument): List<BsonDocument> {
        DocumentQuery.matches(BsonDocument(), filter)
        val docs = data["$db.$coll"] ?: return emptyList()
        // {_id: value}: the _id index answers (values it cannot answer exactly fall back to a scan)
        if (filter.size == 1) filter["_id"]?.let { id -> docs.withId(id)?.let { return it } }
        return docs.filter { DocumentQuery.matches(it, filter) }
    }

    /**
     * `update` with `updates: [{q, u, multi?, upsert?}]` ([DocumentUpdate]); replies
     * `{n, nModified, upserted?, writeErrors?, ok: 1}` as mongod does.
     */
    @Synchronized
    internal fun update(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "update")
        val updates = cmd["updates"]?.takeIf { it.isArray }?.asArray() ?: return badValue("update needs updates")
        // mongod parses every statement's pipeline before it runs any: a bad one fails the whole command
        for (entry in updates) (entry as? BsonDocument)?.get("u")?.let { if (it is BsonArray) UpdatePipeline.check(it) }
        val list = collection(db, coll)
        var n = 0
        var modified = 0
        val upserted = BsonArray()
        val writeErrors = BsonArray()
        for ((index, entry) in updates.withIndex()) {
            val spec = entry.takeIf { it.isDocument }?.asDocument() ?: return badValue("each update must be a document")
            val q = spec["q"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument()
            val u = spec["u"]?.takeIf { it.isDocument || it.isArray } ?: return badValue("update needs u as a document or a pipeline")
            val multi = spec["multi"]?.let { it.isBoolean && it.asBoolean().value } == true
            try {
                require(!multi || u !is BsonDocument || DocumentUpdate.isOperatorUpdate(u)) { "multi update is not supported for replacement-style update" }
                val hits = list.indices.filter { DocumentQuery.matches(list[it], q) }.let { if (multi) it else it.take(1) }
                val after = hits.map { DocumentUpdate.applyAny(list[it], u) }
                hits.forEachIndexed { k, i -> if (after[k] != list[i]) modified++; list[i] = after[k] }
                n += hits.size
                if (hits.isEmpty() && spec["upsert"]?.let { it.isBoolean && it.asBoolean().value } == true) {
                    val doc = DocumentUpdate.upserted(q, u)
                    list.add(doc)
                    upserted.add(BsonDocument("index", BsonInt32(index)).append("_id", doc["_id"]))
                    n++
                }
            } catch (e: IllegalArgumentException) {
                writeErrors.add(BsonDocument("index", BsonInt32(index)).append("code", BsonInt32(2)).append("errmsg", BsonString(e.message ?: "bad update")))
                if (cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true) break
            }
        }
        val reply = BsonDocument("n", BsonInt32(n)).append("nModified", BsonInt32(modified))
        if (upserted.isNotEmpty()) reply["upserted"] = upserted
        return withWriteErrors(reply, writeErrors)
    }

    @Synchronized
    internal fun delete(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "delete")
        val deletes = cmd["deletes"]?.takeIf { it.isArray }?.asArray() ?: return badValue("delete needs deletes")
        val list: MutableList<BsonDocument> = data["$db.$coll"] ?: ArrayList()
        var n = 0
        val writeErrors = BsonArray()
        for ((index, d) in deletes.withIndex()) {
            val q = d.asDocument()["q"]?.asDocument() ?: BsonDocument()
            val limit = d.asDocument()["limit"]?.asNumber()?.intValue() ?: 0
            try {
                DocumentQuery.matches(BsonDocument(), q)
            } catch (e: IllegalArgumentException) {
                writeErrors.add(BsonDocument("index", BsonInt32(index)).append("code", BsonInt32(2)).append("errmsg", BsonString(e.message ?: "bad filter")))
                if (cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true) break else continue
            }
            val it = list.iterator()
            var removed = 0
            while (it.hasNext() && (limit == 0 || removed < limit)) {
                if (DocumentQuery.matches(it.next(), q)) { it.remove(); removed++ }
            }
            n += removed
        }
        return withWriteErrors(BsonDocument("n", BsonInt32(n)), writeErrors)
    }

    /** `findAndModify` with query, sort, update or remove, new, upsert, fields: replies `{lastErrorObject, value, ok}`. */
    private fun findAndModify(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "findAndModify")
        val list = collection(db, coll)
        val query = cmd["query"] as? BsonDocument ?: BsonDocument()
        val remove = cmd["remove"]?.let { DocumentQuery.truthy(it) } == true
        // an update document, or (MongoDB 4.2+) an aggregation pipeline
        val update = cmd["update"]?.takeIf { it.isDocument || it.isArray }
        require(remove != (update != null)) { "Either an update or remove=true must be specified" }
        if (update is BsonArray) UpdatePipeline.check(update)
        val returnNew = cmd["new"]?.let { DocumentQuery.truthy(it) } == true
        val fields = cmd["fields"] as? BsonDocument
        val target = DocumentQuery.sort(matching(db, coll, query), cmd["sort"] as? BsonDocument).firstOrNull()
        val lastError = BsonDocument("n", BsonInt32(if (target != null) 1 else 0))
        val value = when {
            target == null && update != null && cmd["upsert"]?.let { DocumentQuery.truthy(it) } == true -> {
                val doc = DocumentUpdate.upserted(query, update)
                list.add(doc)
                lastError["n"] = BsonInt32(1)
                lastError["updatedExisting"] = BsonBoolean.FALSE
                lastError["upserted"] = doc["_id"]
                if (returnNew) doc else null
            }
            target == null -> null.also { if (update != null) lastError["updatedExisting"] = BsonBoolean.FALSE }
            remove -> target.also { list.removeAt(list.indexOfFirst { it["_id"] == target["_id"] }) }
            else -> {
                val after = DocumentUpdate.applyAny(target, update!!)
                list[list.indexOfFirst { it["_id"] == target["_id"] }] = after
                lastError["updatedExisting"] = BsonBoolean.TRUE
                if (returnNew) after else target
            }
        }
        return BsonDocument("lastErrorObject", lastError)
            .append("value", value?.let { DocumentQuery.project(it, fields) } ?: BsonNull.VALUE)
            .append("ok", BsonInt32(1))
    }

    private fun count(db: String, cmd: BsonDocument): BsonDocument {
        val hits = matching(db, name(cmd, "count"), cmd["query"] as? BsonDocument ?: BsonDocument())
        val skip = intOf(cmd, "skip") ?: 0
        val limit = intOf(cmd, "limit")?.takeIf { it > 0 } ?: Int.MAX_VALUE
        return DocumentQuery.countReply(hits.drop(skip).take(limit).size)
    }

    private fun distinct(db: String, cmd: BsonDocument): BsonDocument {
        val key = cmd["key"]?.takeIf { it.isString }?.asString()?.value ?: return badValue("distinct needs a key")
        val values = matching(db, name(cmd, "distinct"), cmd["query"] as? BsonDocument ?: BsonDocument())
            .mapNotNull { DocumentQuery.get(it, key) }
            .flatMap { if (it is BsonArray) it.toList() else listOf(it) }
            .distinct()
        return BsonDocument("values", BsonArray(values)).append("ok", BsonInt32(1))
    }

    private fun aggregate(db: String, cmd: BsonDocument): BsonDocument {
        val target = cmd["aggregate"]!!
        val pipeline = cmd["pipeline"]?.takeIf { it.isArray }?.asArray()?.map { require(it.isDocument) { "each pipeline stage must be a document" }; it.asDocument() }
            ?: return badValue("aggregate needs a pipeline")
        val source = if (target.isString) matching(db, target.asString().value, BsonDocument()) else emptyList()
        val out = InMemoryAggregation.run(source, pipeline) { coll, docs -> data["$db.$coll"] = IdIndexedDocuments(docs.map { it.clone() }) }
        val batchSize = (cmd["cursor"] as? BsonDocument)?.let { intOf(it, "batchSize") }
        val ns = if (target.isString) "$db.${target.asString().value}" else "$db.\$cmd.aggregate"
        return cursors.first(ns, out, batchSize)
    }

    private fun create(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "create")
        if (data.containsKey("$db.$coll")) return WireServer.error(48, "NamespaceExists", "Collection $db.$coll already exists.")
        collection(db, coll)
        return ok()
    }

    @Synchronized
    internal fun drop(db: String, cmd: BsonDocument): BsonDocument {
        val ns = "$db.${name(cmd, "drop")}"
        data.remove(ns)
        indexes.remove(ns)
        return ok()
    }

    private fun createIndexes(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "createIndexes")
        val specs = cmd["indexes"]?.takeIf { it.isArray }?.asArray()?.map { it.asDocument() } ?: return badValue("createIndexes needs indexes")
        collection(db, coll)
        val list = indexes.getOrPut("$db.$coll") { ArrayList() }
        val before = list.size + 1
        for (s in specs) {
            require(s["key"] is BsonDocument && s["name"]?.isString == true) { "each index needs a key document and a name" }
            if (list.none { it["name"] == s["name"] }) list.add(BsonDocument("v", BsonInt32(2)).append("key", s["key"]).append("name", s["name"]))
        }
        return BsonDocument("numIndexesBefore", BsonInt32(before)).append("numIndexesAfter", BsonInt32(list.size + 1)).append("ok", BsonInt32(1))
    }

    private fun dropIndexes(db: String, cmd: BsonDocument): BsonDocument {
        val ns = "$db.${name(cmd, "dropIndexes")}"
        if (!data.containsKey(ns)) return WireServer.error(26, "NamespaceNotFound", "ns not found $ns")
        val which = cmd["index"]
        val list = indexes.getOrPut(ns) { ArrayList() }
        val removed = when {
            which == null || (which.isString && which.asString().value == "*") -> true.also { list.clear() }
            which.isString -> list.removeIf { it["name"] == which }
            else -> list.removeIf { it["key"] == which }
        }
        if (!removed) return WireServer.error(27, "IndexNotFound", "index not found with name [$which]")
        return BsonDocument("nIndexesWas", BsonInt32(list.size + 2)).append("ok", BsonInt32(1))
    }

    private fun listIndexes(db: String, cmd: BsonDocument): BsonDocument {
        val coll = name(cmd, "listIndexes")
        if (!data.containsKey("$db.$coll")) return WireServer.error(26, "NamespaceNotFound", "ns does not exist: $db.$coll")
        val all = listOf(BsonDocument("v", BsonInt32(2)).append("key", BsonDocument("_id", BsonInt32(1))).append("name", BsonString("_id_"))) +
            (indexes["$db.$coll"] ?: emptyList())
        return cursors.first("$db.$coll", all.map { it.clone() }, (cmd["cursor"] as? BsonDocument)?.let { intOf(it, "batchSize") })
    }

    private fun listCollections(db: String, cmd: BsonDocument): BsonDocument {
        val filter = cmd["filter"] as? BsonDocument ?: BsonDocument()
        val nameOnly = cmd["nameOnly"]?.let { DocumentQuery.truthy(it) } == true
        val infos = data.keys.filter { it.startsWith("$db.") }.sorted().map { ns ->
            val info = BsonDocument("name", BsonString(ns.substringAfter('.'))).append("type", BsonString("collection"))
            if (nameOnly) info else info.append("options", BsonDocument()).append("info", BsonDocument("readOnly", BsonBoolean.FALSE))
        }.filter { DocumentQuery.matches(it, filter) }
        return cursors.first("$db.\$cmd.listCollections", infos, (cmd["cursor"] as? BsonDocument)?.let { intOf(it, "batchSize") })
    }

    /** `listDatabases`: every database holding a collection, with `sizeOnDisk` 0, filtered; `nameOnly` lists the names only. */
    @Synchronized
    internal fun listDatabases(cmd: BsonDocument = BsonDocument()): BsonDocument {
        val nameOnly = cmd["nameOnly"]?.let { DocumentQuery.truthy(it) } == true
        val filter = cmd["filter"] as? BsonDocument ?: BsonDocument()
        val names = data.keys.map { it.substringBefore('.') }.distinct().sorted()
        val dbs = names.map {
            val d = BsonDocument("name", BsonString(it))
            if (nameOnly) d else d.append("sizeOnDisk", BsonInt64(0)).append("empty", BsonBoolean.FALSE)
        }.filter { DocumentQuery.matches(it, filter) }
        val reply = BsonDocument("databases", BsonArray(dbs))
        if (!nameOnly) reply["totalSize"] = BsonInt64(0)
        return reply.append("ok", BsonInt32(1))
    }

    private fun collection(db: String, coll: String) = data.getOrPut("$db.$coll") { IdIndexedDocuments() }

    private fun name(cmd: BsonDocument, key: String): String {
        val v = cmd[key]
        require(v != null && v.isString) { "collection name has invalid type ${v?.bsonType}" }
        return v.asString().value
    }

    private fun intOf(d: BsonDocument, key: String): Int? = d[key]?.takeIf { it.isNumber }?.asNumber()?.intValue()

    private fun withWriteErrors(reply: BsonDocument, writeErrors: BsonArray): BsonDocument {
        if (writeErrors.isNotEmpty()) reply["writeErrors"] = writeErrors
        return reply.append("ok", BsonInt32(1))
    }

    private fun duplicateKey(index: Int, ns: String, doc: BsonDocument) = BsonDocument("index", BsonInt32(index))
        .append("code", BsonInt32(11000))
        .append("errmsg", BsonString("E11000 duplicate key error collection: $ns index: _id_ dup key: { _id: ${doc["_id"]} }"))

    private fun ok() = BsonDocument("ok", BsonInt32(1))

    private fun badValue(msg: String) =
        BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString(msg)).append("code", BsonInt32(2)).append("codeName", BsonString("BadValue"))

    companion object {
        /** The commands [execute] answers. */
        val COMMANDS: Set<String> = setOf(
            "insert", "find", "update", "delete", "findAndModify", "count", "distinct", "aggregate", "getMore", "killCursors",
            "create", "drop", "dropDatabase", "createIndexes", "dropIndexes", "listIndexes", "listCollections", "listDatabases",
            ClientBulkWriteCommand.NAME, InMemoryMapReduce.NAME,
        )

        /** The commands of [COMMANDS] that write (a replica set member accepts them only as primary). */
        val WRITES: Set<String> = setOf("insert", "update", "delete", "findAndModify", "create", "drop", "dropDatabase", "createIndexes", "dropIndexes", ClientBulkWriteCommand.NAME)
    }
}
