package dev.mooring.testkit.server

import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue

/**
 * The aggregation stages tests use, over in-memory documents: `$match`, `$sort`, `$skip`,
 * `$limit`, `$project`, `$count`, `$listLocalSessions` (always empty), `$group` (an `_id` constant or `"$field"`, accumulators
 * `$sum` of a constant or a `"$field"`), and `$out` / `$merge` into a collection of the same
 * database (as the last stage), and `$listLocalSessions` (first stage; no sessions are cached, so
 * it yields nothing). Other stages are BadValue ([IllegalArgumentException]). Pure.
 */
object InMemoryAggregation {
    /** Runs [pipeline] over [source]; [write] receives `(collection, documents)` for `$out`/`$merge`. */
    fun run(source: List<BsonDocument>, pipeline: List<BsonDocument>, write: (String, List<BsonDocument>) -> Unit): List<BsonDocument> {
        var docs = source
        for ((i, stage) in pipeline.withIndex()) {
            require(stage.size == 1) { "A pipeline stage specification object must contain exactly one field." }
            val (name, arg) = stage.entries.single()
            docs = when (name) {
                "\$match" -> docs.filter { DocumentQuery.matches(it, arg.asDocument()) }
                "\$sort" -> DocumentQuery.sort(docs, arg.asDocument())
                "\$skip" -> docs.drop(arg.asNumber().intValue())
                "\$limit" -> docs.take(arg.asNumber().intValue())
                "\$project" -> docs.map { DocumentQuery.project(it, arg.asDocument()) }
                // database-level source stage: the test kit keeps no logical session cache, so it lists none
                "\$listLocalSessions" -> {
                    require(i == 0) { "\$listLocalSessions must be the first stage in the pipeline" }
                    emptyList()
                }
                "\$count" -> listOf(BsonDocument(arg.asString().value, BsonInt32(docs.size)))
                "\$group" -> group(docs, arg.asDocument())
                // the test kit keeps no server-side session records
                "\$listLocalSessions" -> emptyList<BsonDocument>().also { require(i == 0) { "\$listLocalSessions must be the first stage" } }
                "\$out", "\$merge" -> {
                    require(i == pipeline.lastIndex) { "$name can only be the final stage in the pipeline" }
                    val into = if (arg.isString) arg.asString().value else (arg.asDocument()["into"] ?: arg.asDocument()["coll"])!!.let {
                        if (it.isString) it.asString().value else it.asDocument().getString("coll").value
                    }
                    write(into, docs)
                    emptyList()
                }
                else -> throw IllegalArgumentException("Unrecognized pipeline stage name: '$name'")
            }
        }
        return docs
    }

    private fun group(docs: List<BsonDocument>, spec: BsonDocument): List<BsonDocument> {
        val key = spec["_id"] ?: throw IllegalArgumentException("a group specification must include an _id")
        val groups = LinkedHashMap<BsonValue, MutableList<BsonDocument>>()
        for (d in docs) groups.getOrPut(value(d, key)) { ArrayList() }.add(d)
        return groups.map { (id, members) ->
            BsonDocument("_id", id).also { out ->
                spec.filter { it.key != "_id" }.forEach { (field, acc) ->
                    val (op, expr) = acc.asDocument().entries.single()
                    require(op == "\$sum") { "unsupported accumulator $op" }
                    val total = members.sumOf { m -> value(m, expr).takeIf { it.isNumber }?.asNumber()?.longValue() ?: 0L }
                    out[field] = if (total in Int.MIN_VALUE..Int.MAX_VALUE) BsonInt32(total.toInt()) else org.bson.BsonInt64(total)
                }
            }
        }
    }

    private fun value(doc: BsonDocument, expr: BsonValue): BsonValue =
        if (expr.isString && expr.asString().value.startsWith("$")) DocumentQuery.get(doc, expr.asString().value.substring(1)) ?: org.bson.BsonNull.VALUE else expr
}
