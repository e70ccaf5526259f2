package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonValue

/**
 * Applies an update document as mongod does for the documents tests use: a replacement
 * (keeping `_id`), or the operators `$set $unset $inc $mul $min $max $rename $push $addToSet
 * $pull $setOnInsert` on top-level or dotted fields. Unknown operators, a mix of operators and
 * fields, or changing `_id` are BadValue ([IllegalArgumentException]). Pure; thread-safe.
 */
object DocumentUpdate {
    /** True when [u] is an operator update (every key starts with `$`); throws for a mix. */
    fun isOperatorUpdate(u: BsonDocument): Boolean {
        val ops = u.keys.count { it.startsWith("$") }
        require(ops == 0 || ops == u.size) { "an update document must use operators only or be a replacement" }
        return ops > 0
    }

    /** [doc] updated by [u]; [inserting] applies `$setOnInsert` too (an upsert's insert). */
    fun apply(doc: BsonDocument, u: BsonDocument, inserting: Boolean = false): BsonDocument {
        if (!isOperatorUpdate(u)) {
            require(!u.containsKey("_id") || doc["_id"] == null || u["_id"] == doc["_id"]) { "the (immutable) field '_id' was found to have been altered" }
            return BsonDocument().also { d -> (doc["_id"] ?: u["_id"])?.let { d["_id"] = it }; u.forEach { (k, v) -> if (k != "_id") d[k] = v } }
        }
        val out = doc.clone()
        for ((op, arg) in u) {
            require(arg.isDocument) { "Modifiers operate on fields but we found type ${arg.bsonType} instead" }
            for ((path, v) in arg.asDocument()) {
                require(path != "_id" || op == "\$setOnInsert" || (op == "\$set" && v == doc["_id"]) || doc["_id"] == null) {
                    "Performing an update on the path '_id' would modify the immutable field '_id'"
                }
                when (op) {
                    "\$set" -> put(out, path, v)
                    "\$setOnInsert" -> if (inserting) put(out, path, v)
                    "\$unset" -> remove(out, path)
                    "\$inc" -> put(out, path, arithmetic(DocumentQuery.get(out, path), v, Long::plus, Double::plus))
                    "\$mul" -> put(out, path, arithmetic(DocumentQuery.get(out, path), v, Long::times, Double::times))
                    "\$min" -> DocumentQuery.get(out, path).let { cur -> if (cur == null || DocumentQuery.compare(v, cur) < 0) put(out, path, v) }
                    "\$max" -> DocumentQuery.get(out, path).let { cur -> if (cur == null || DocumentQuery.compare(v, cur) > 0) put(out, path, v) }
                    "\$rename" -> {
                        require(v.isString) { "\$rename target must be a string" }
                        DocumentQuery.get(out, path)?.let { moved -> remove(out, path); put(out, v.asString().value, moved) }
                    }
                    "\$push", "\$addToSet" -> {
                        val current = DocumentQuery.get(out, path)
                        require(current == null || current.isArray) { "The field '$path' must be an array" }
                        val list = BsonArray((current as? BsonArray)?.toList() ?: emptyList())
                        val each = (v as? BsonDocument)?.get("\$each")?.asArray()?.toList() ?: listOf(v)
                        each.forEach { e -> if (op == "\$push" || e !in list) list.add(e) }
                        put(out, path, list)
                    }
                    "\$pull" -> (DocumentQuery.get(out, path) as? BsonArray)?.let { arr ->
                        put(out, path, BsonArray(arr.filterNot { e -> if (v is BsonDocument && e is BsonDocument) DocumentQuery.matches(e, v) else e == v }))
                    }
                    else -> throw IllegalArgumentException("Unknown modifier: $op")
                }
            }
        }
        return out
    }

    /**
     * [doc] updated by [u]: an update or replacement document ([apply]), or an aggregation
     * pipeline (MongoDB 4.2+ updates with a pipeline: [UpdatePipeline]). Anything else is BadValue.
     */
    fun applyAny(doc: BsonDocument, u: BsonValue, inserting: Boolean = false): BsonDocument = when (u) {
        is BsonDocument -> apply(doc, u, inserting)
        is BsonArray -> UpdatePipeline.apply(doc, u)
        else -> throw IllegalArgumentException("the update must be a document or a pipeline (array), got ${u.bsonType}")
    }

    /** The document an upsert inserts: the filter's equality fields, then [u] (with `$setOnInsert`, or a pipeline), and an `_id`. */
    fun upserted(filter: BsonDocument, u: BsonValue): BsonDocument {
        val seed = BsonDocument()
        filter.forEach { (k, v) -> if (!k.startsWith("$") && !(v is BsonDocument && v.keys.any { it.startsWith("$") })) put(seed, k, v) }
        val doc = applyAny(seed, u, inserting = true)
        return if (doc.containsKey("_id")) doc else BsonDocument("_id", BsonObjectId()).apply { putAll(doc) }
    }

    private fun arithmetic(current: BsonValue?, by: BsonValue, longOp: (Long, Long) -> Long, doubleOp: (Double, Double) -> Double): BsonValue {
        require(by.isNumber) { "Cannot increment with non-numeric argument" }
        val base = current ?: BsonInt32(0)
        require(base.isNumber) { "Cannot apply \$inc to a value of non-numeric type" }
        return when {
            base is BsonDouble || by is BsonDouble -> BsonDouble(doubleOp(base.asNumber().doubleValue(), by.asNumber().doubleValue()))
            base is BsonInt64 || by is BsonInt64 -> BsonInt64(longOp(base.asNumber().longValue(), by.asNumber().longValue()))
            else -> {
                val r = longOp(base.asNumber().longValue(), by.asNumber().longValue())
                if (r in Int.MIN_VALUE..Int.MAX_VALUE) BsonInt32(r.toInt()) else BsonInt64(r)
            }
        }
    }

    /** Sets the dotted [path] of [doc] to [value], creating the documents on the way (also for update pipelines). */
    internal fun put(doc: BsonDocument, path: String, value: BsonValue) {
        val parts = path.split('.')
        var target = doc
        for (p in parts.dropLast(1)) {
            target = (target[p] as? BsonDocument) ?: BsonDocument().also { target[p] = it }
        }
        target[parts.last()] = value
    }

    /** Removes the dotted [path] of [doc], if it is there (also for update pipelines). */
    internal fun remove(doc: BsonDocument, path: String) {
        val parts = path.split('.')
        var target: BsonDocument = doc
        for (p in parts.dropLast(1)) target = (target[p] as? BsonDocument) ?: return
        target.remove(parts.last())
    }
}
