package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonNull
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The update forms the data engine cannot take as one command, run as several of its own: an
 * update statement given as a pipeline (each matched document, found by the engine's `find`,
 * rewritten by [PipelineUpdates] and stored with the engine's replace by `_id`; an upsert is the
 * pipeline applied to the engine's upsert document), a findAndModify given a pipeline (the
 * document the engine's `find` picks with the command's `sort`, rewritten, then the engine's
 * findAndModify replaces it by `_id` and answers with `new`/`fields` as usual), and the `sort`
 * of an update or replace statement (MongoDB 8.0: the engine's `find` with that sort and limit 1
 * picks the document, the statement then applies to it alone), and an upsert whose filter (or
 * replacement) gives `_id` the value null (stored with `_id: null`, as mongod does). Replies are the one-statement
 * command's (`{n, nModified, upserted?, ok}`, findAndModify's `{lastErrorObject, value, ok}`).
 * Pure: the engine is reached through the given function.
 */
internal object ComposedUpdates {
    /** [cmd] (a one-statement update or a findAndModify) run through [engine], or null when the engine takes it as it is. */
    fun execute(cmd: BsonDocument, engine: (BsonDocument) -> BsonDocument): BsonDocument? = when (cmd.firstKey) {
        "update" -> update(cmd, engine)
        "findAndModify" -> findAndModify(cmd, engine)
        else -> null
    }

    private fun update(cmd: BsonDocument, engine: (BsonDocument) -> BsonDocument): BsonDocument? {
        val statement = PipelineUpdates.statement(cmd) ?: return null
        val pipeline = statement["u"] as? BsonArray
        val sort = statement["sort"] as? BsonDocument
        val filter = statement["q"] as? BsonDocument ?: BsonDocument()
        val nullId = pipeline == null && isTrue(statement["upsert"]) && (filter["_id"] is BsonNull || replacementId(statement["u"]) is BsonNull)
        if (pipeline == null && sort == null && !nullId) return null
        pipeline?.let(PipelineUpdates::refusal)?.let { return it }
        val collection = cmd["update"] as? BsonString ?: return null
        if (pipeline == null && sort == null) return keptNullId(collection, engine(cmd), engine)
        val multi = isTrue(statement["multi"])
        val reply = engine(find(collection, filter, sort, if (multi) null else 1, statement["hint"]))
        val found = batch(reply) ?: return reply
        if (pipeline == null) {
            // the sort of a one-document update: the statement applies to the document it picks (or upserts as usual)
            val one = statement.clone().apply { remove("sort") }
            found.firstOrNull()?.let { one["q"] = BsonDocument("\$and", BsonArray(listOf(filter, BsonDocument("_id", it["_id"])))) }
            val reply = engine(cmd.clone().append("updates", BsonArray(listOf(one))))
            return if (nullId) keptNullId(collection, reply, engine) else reply
        }
        if (found.isEmpty()) {
            return if (isTrue(statement["upsert"])) PipelineUpdates.upsert(collection, filter, pipeline, engine) else written(0, 0)
        }
        var n = 0
        var modified = 0
        for (doc in found) {
            val updated = try {
                PipelineUpdates.apply(pipeline, doc)
            } catch (e: RuntimeException) {
                return PipelineUpdates.engineError(e)
            }
            val stored = engine(PipelineUpdates.replaceById(collection, updated))
            if (!isOk(stored) || stored.containsKey("writeErrors")) return stored
            n += stored.getNumber("n", BsonInt32(0)).intValue()
            modified += stored.getNumber("nModified", BsonInt32(0)).intValue()
        }
        return written(n, modified)
    }

    private fun findAndModify(cmd: BsonDocument, engine: (BsonDocument) -> BsonDocument): BsonDocument? {
        val pipeline = cmd["update"] as? BsonArray ?: return null
        PipelineUpdates.refusal(pipeline)?.let { return it }
        val collection = cmd["findAndModify"] as? BsonString ?: return null
        val filter = cmd["query"] as? BsonDocument ?: BsonDocument()
        val reply = engine(find(collection, filter, cmd["sort"] as? BsonDocument, 1, cmd["hint"]))
        val found = batch(reply) ?: return reply
        val doc = found.firstOrNull()
        if (doc == null) {
            if (!isTrue(cmd["upsert"])) return BsonDocument("lastErrorObject", BsonDocument("n", BsonInt32(0)).append("updatedExisting", BsonBoolean.FALSE)).append("value", BsonNull.VALUE).append("ok", BsonInt32(1))
            val upserted = PipelineUpdates.upsert(collection, filter, pipeline, engine)
            val id = ((upserted["upserted"] as? BsonArray)?.firstOrNull() as? BsonDocument)?.get("_id") ?: return upserted
            val value = if (isTrue(cmd["new"])) {
                val read = find(collection, BsonDocument("_id", id), null, 1, null).apply { (cmd["fields"] as? BsonDocument)?.let { put("projection", it) } }
                ((engine(read)["cursor"] as? BsonDocument)?.getArray("firstBatch")?.firstOrNull()) ?: BsonNull.VALUE
            } else {
                BsonNull.VALUE
            }
            return BsonDocument("lastErrorObject", BsonDocument("n", BsonInt32(1)).append("updatedExisting", BsonBoolean.FALSE).append("upserted", id))
                .append("value", value).append("ok", BsonInt32(1))
        }
        val updated = try {
            PipelineUpdates.apply(pipeline, doc)
        } catch (e: RuntimeException) {
            return PipelineUpdates.engineError(e)
        }
        return engine(cmd.clone().apply {
            put("query", BsonDocument("_id", doc["_id"]))
            put("update", updated)
            put("upsert", BsonBoolean.FALSE)
            remove("sort")
            remove("hint")
        })
    }

    /** The `_id` of a replacement document [u] (not an update with operators), or null. */
    private fun replacementId(u: BsonValue?): BsonValue? = (u as? BsonDocument)?.takeIf { d -> d.keys.none { it.startsWith("$") } }?.get("_id")

    /**
     * The engine's upsert [reply] with the document it created stored under `_id: null`, as
     * mongod stores it when the filter's equality (or the replacement) gives `_id` the value null
     * (the engine generates an ObjectId for a null `_id`): the engine's document is removed and
     * inserted again, by the engine, with the null `_id` given explicitly.
     */
    private fun keptNullId(collection: BsonString, reply: BsonDocument, engine: (BsonDocument) -> BsonDocument): BsonDocument {
        val entry = (reply["upserted"] as? BsonArray)?.singleOrNull() as? BsonDocument ?: return reply
        val id = entry["_id"]?.takeIf { it !is BsonNull } ?: return reply
        val created = batch(engine(find(collection, BsonDocument("_id", id), null, 1, null)))?.singleOrNull() ?: return reply
        engine(BsonDocument("delete", collection).append("deletes", BsonArray(listOf(BsonDocument("q", BsonDocument("_id", id)).append("limit", BsonInt32(1))))))
        val stored = BsonDocument("_id", BsonNull.VALUE).apply { created.forEach { (k, v) -> if (k != "_id") put(k, v) } }
        val inserted = engine(BsonDocument("insert", collection).append("documents", BsonArray(listOf(stored))))
        if (!isOk(inserted) || inserted.containsKey("writeErrors")) return inserted
        return reply.clone().append("upserted", BsonArray(listOf(entry.clone().append("_id", BsonNull.VALUE))))
    }

    /** The documents of the engine's `find` [reply] (null when it failed: the caller answers with its error). */
    private fun batch(reply: BsonDocument): List<BsonDocument>? {
        if (!isOk(reply)) return null
        return (reply["cursor"] as? BsonDocument)?.getArray("firstBatch")?.map { it.asDocument() } ?: emptyList()
    }

    private fun find(collection: BsonString, filter: BsonDocument, sort: BsonDocument?, limit: Int?, hint: BsonValue?) =
        BsonDocument("find", collection).append("filter", filter).apply {
            sort?.let { put("sort", it) }
            limit?.let { put("limit", BsonInt32(it)) }
            hint?.let { put("hint", it) }
        }

    private fun written(n: Int, modified: Int) = BsonDocument("n", BsonInt32(n)).append("nModified", BsonInt32(modified)).append("ok", BsonInt32(1))

    private fun isTrue(v: BsonValue?) = v?.let { it.isBoolean && it.asBoolean().value } == true

    private fun isOk(reply: BsonDocument) = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0
}
