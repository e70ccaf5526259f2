package dev.mooring.testkit.server

import de.bwaldvogel.mongo.backend.aggregation.Expression
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The `let` option of MongoDB 5.0+ (aggregate, find, update, delete, findAndModify, and the
 * `bulkWrite` admin command): variables the command's filters, pipelines and pipeline updates
 * read as `$$name`. The data engine has no such option; [bound] gives it a command it can run:
 * each value is evaluated once, without a document, by the engine's own expression evaluator
 * (a `let` value is a constant: `{$rand: {}}` is one number for the whole command), then every
 * `$$name` (or `$$name.path`) the command reads in an expression context (inside `$expr` of a
 * filter, the stages of a pipeline, a pipeline update) is replaced by `{$literal: value}` (a
 * path's value found by the engine's field-path evaluation), except where the pipeline binds the name itself
 * (`$let` vars, the `as` of `$map`/`$filter`, `$reduce`'s `this`/`value`, `$lookup`'s `let`).
 * A `$$name` nobody binds is left to the engine, which refuses it as mongod does (17276, "Use of
 * undefined variable"). Query operators outside `$expr` take `$$...` strings literally, as on
 * mongod. Pure.
 */
internal object LetVariables {
    /** Where each command keeps what reads variables: top-level filter keys, and pipeline/update keys. */
    private val FILTERS = mapOf("find" to listOf("filter"), "findAndModify" to listOf("query"))
    private val PIPELINES = mapOf("aggregate" to listOf("pipeline"), "findAndModify" to listOf("update"), "find" to listOf("projection"))

    /** [cmd] with its `let` variables bound (and the option gone), or [cmd] itself when it has none. */
    fun bound(cmd: BsonDocument): BsonDocument {
        val let = cmd["let"] as? BsonDocument ?: return cmd
        val values = evaluated(let)
        val out = cmd.clone().apply { remove("let") }
        val name = out.firstKey
        FILTERS[name]?.forEach { key -> (out[key] as? BsonDocument)?.let { out[key] = filter(it, values) } }
        PIPELINES[name]?.forEach { key -> out[key]?.let { out[key] = if (it is BsonArray) pipeline(it, values) else if (name == "find") expression(it, values) else it } }
        when (name) {
            "update" -> out["updates"] = statements(out["updates"]) { s ->
                (s["q"] as? BsonDocument)?.let { s["q"] = filter(it, values) }
                (s["u"] as? BsonArray)?.let { s["u"] = pipeline(it, values) }
            }
            "delete" -> out["deletes"] = statements(out["deletes"]) { s -> (s["q"] as? BsonDocument)?.let { s["q"] = filter(it, values) } }
            ClientBulkWriteCommand.NAME -> out["ops"] = statements(out["ops"]) { s ->
                (s["filter"] as? BsonDocument)?.let { s["filter"] = filter(it, values) }
                (s["updateMods"] as? BsonArray)?.let { s["updateMods"] = pipeline(it, values) }
            }
        }
        return out
    }

    private fun statements(array: BsonValue?, bind: (BsonDocument) -> Unit): BsonValue? =
        (array as? BsonArray)?.let { a -> BsonArray(a.map { s -> if (s is BsonDocument) s.clone().also(bind) else s }) } ?: array

    /** Each `let` value evaluated by the engine against no document (so a field path is missing). */
    private fun evaluated(let: BsonDocument): Map<String, BsonValue> = let.mapValues { (_, v) ->
        val holder = BackendDocuments.toBackend(BsonDocument("v", v))
        val result = de.bwaldvogel.mongo.bson.Document("v", Expression.evaluateDocument(holder["v"], de.bwaldvogel.mongo.bson.Document()))
        BackendDocuments.fromBackend(result)["v"] ?: org.bson.BsonNull.VALUE
    }

    /** A query filter: only `$expr` (also under `$and`/`$or`/`$nor`) reads variables. */
    private fun filter(doc: BsonDocument, values: Map<String, BsonValue>): BsonDocument = BsonDocument().apply {
        for ((k, v) in doc) {
            put(k, when {
                k == "\$expr" -> expression(v, values)
                k in LOGICAL && v is BsonArray -> BsonArray(v.map { if (it is BsonDocument) filter(it, values) else it })
                else -> v
            })
        }
    }

    private val LOGICAL = setOf("\$and", "\$or", "\$nor")

    /** A pipeline: `$match` stages are filters, `$lookup` binds its own `let` in its sub-pipeline, the rest are expressions. */
    private fun pipeline(stages: BsonArray, values: Map<String, BsonValue>): BsonArray = BsonArray(stages.map { stage ->
        if (stage !is BsonDocument || stage.size != 1) return@map stage
        val (name, body) = stage.entries.first()
        BsonDocument(name, when {
            name == "\$match" && body is BsonDocument -> filter(body, values)
            name == "\$lookup" && body is BsonDocument -> lookup(body, values)
            else -> expression(body, values)
        })
    })

    private fun lookup(body: BsonDocument, values: Map<String, BsonValue>): BsonDocument = body.clone().apply {
        val own = (body["let"] as? BsonDocument)
        own?.let { put("let", expression(it, values)) }
        (body["pipeline"] as? BsonArray)?.let { put("pipeline", pipeline(it, values - own?.keys.orEmpty())) }
    }

    /** An aggregation expression (or a stage's body): variables replaced outside the scopes that rebind them. */
    private fun expression(value: BsonValue, values: Map<String, BsonValue>): BsonValue = when {
        values.isEmpty() -> value
        value is BsonString -> variable(value.value, values) ?: value
        value is BsonArray -> BsonArray(value.map { expression(it, values) })
        value is BsonDocument -> scoped(value, values)
        else -> value
    }

    private fun scoped(doc: BsonDocument, values: Map<String, BsonValue>): BsonValue {
        if (doc.size == 1) {
            val (op, arg) = doc.entries.first()
            val args = arg as? BsonDocument
            when {
                op == "\$literal" -> return doc
                op == "\$let" && args != null -> {
                    val vars = args["vars"] as? BsonDocument ?: BsonDocument()
                    return BsonDocument(op, args.clone().apply {
                        put("vars", expression(vars, values))
                        args["in"]?.let { put("in", expression(it, values - vars.keys)) }
                    })
                }
                op in ITERATORS && args != null -> {
                    val bound = boundBy(op, args)
                    return BsonDocument(op, BsonDocument().apply {
                        for ((k, v) in args) put(k, expression(v, if (k in SCOPED_ARGUMENTS) values - bound else values))
                    })
                }
            }
        }
        return BsonDocument().apply { for ((k, v) in doc) put(k, expression(v, values)) }
    }

    /** The operators that bind names for their [SCOPED_ARGUMENTS]. */
    private val ITERATORS = setOf("\$map", "\$filter", "\$reduce")

    /** The names [op] binds: `as` (default `this`) for `$map`/`$filter`, `this` and `value` for `$reduce`. */
    private fun boundBy(op: String, args: BsonDocument): Set<String> =
        if (op == "\$reduce") setOf("this", "value") else setOf(args["as"]?.takeIf { it.isString }?.asString()?.value ?: "this")

    private val SCOPED_ARGUMENTS = setOf("in", "cond")

    /** The replacement of the string [s] when it reads a bound variable: `{$literal: value}` (of the path's value for `$$name.path`). */
    private fun variable(s: String, values: Map<String, BsonValue>): BsonValue? {
        if (!s.startsWith("\$\$")) return null
        val name = s.substring(2).substringBefore('.')
        val value = values[name] ?: return null
        if (!s.contains('.')) return BsonDocument("\$literal", value)
        return path(value, s.substringAfter('.').split('.'))?.let { BsonDocument("\$literal", it) } ?: MISSING
    }

    /**
     * The value at [path] in [value], with the engine's own field-path semantics: the engine
     * evaluates `$path` against a document holding [value] (an array's elements are traversed).
     * Null when the path is missing.
     */
    private fun path(value: BsonValue, path: List<String>): BsonValue? {
        val holder = BackendDocuments.toBackend(BsonDocument(HOLDER, value))
        val found = Expression.evaluateDocument("\$$HOLDER.${path.joinToString(".")}", holder) ?: return null
        if (found is de.bwaldvogel.mongo.backend.Missing) return null
        return BackendDocuments.fromBackend(de.bwaldvogel.mongo.bson.Document("v", found))["v"]
    }

    private const val HOLDER = "value"

    /** An expression the engine evaluates to a missing value (an empty array has no element 0). */
    private val MISSING = BsonDocument("\$arrayElemAt", BsonArray(listOf(BsonArray(), org.bson.BsonInt32(0))))
}
