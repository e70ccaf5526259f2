package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonNull
import org.bson.BsonString
import org.bson.BsonValue

/**
 * An update given as an aggregation pipeline (MongoDB 4.2+, in `update` and `findAndModify`),
 * as mongod applies one to a document, for the stages an update pipeline allows: `$set` /
 * `$addFields`, `$unset`, `$project`, `$replaceRoot` / `$replaceWith`. Expressions are literals,
 * `"$field.path"` references, `{$literal: v}`, and documents and arrays of those; other
 * expression operators and stages are BadValue ([IllegalArgumentException]). Pure; thread-safe.
 */
object UpdatePipeline {
    /** Checks that [stages] is a pipeline an update may use (mongod parses it whether or not a document matches). */
    fun check(stages: BsonArray) {
        for (s in stages) {
            require(s is BsonDocument && s.size == 1) { "A pipeline stage specification object must contain exactly one field." }
            require(s.firstKey in STAGES) { "${s.firstKey} is not allowed to be used within an update" }
        }
    }

    /** [doc] after the pipeline [stages]; its `_id` must not change. */
    fun apply(doc: BsonDocument, stages: BsonArray): BsonDocument {
        check(stages)
        var out = doc.clone()
        for (s in stages) {
            val (name, arg) = (s as BsonDocument).entries.single()
            out = when (name) {
                // every expression of the stage reads the stage's input document
                "\$set", "\$addFields" -> out.clone().also { d -> document(name, arg).forEach { (k, v) -> DocumentUpdate.put(d, k, evaluate(v, out)) } }
                "\$unset" -> out.also { d -> fields(arg).forEach { DocumentUpdate.remove(d, it) } }
                "\$project" -> DocumentQuery.project(out, document(name, arg))
                "\$replaceRoot" -> replacement(evaluate(document(name, arg)["newRoot"] ?: BsonNull.VALUE, out), out)
                "\$replaceWith" -> replacement(evaluate(arg, out), out)
                else -> throw IllegalArgumentException("$name is not allowed to be used within an update")
            }
        }
        require(doc["_id"] == null || out["_id"] == doc["_id"]) { "Performing an update on the path '_id' would modify the immutable field '_id'" }
        return out
    }

    private val STAGES = setOf("\$set", "\$addFields", "\$unset", "\$project", "\$replaceRoot", "\$replaceWith")

    private fun replacement(v: BsonValue, current: BsonDocument): BsonDocument {
        require(v is BsonDocument) { "'replacement document' must evaluate to an object, but resulting value was: $v" }
        return if (v.containsKey("_id") || current["_id"] == null) v else BsonDocument("_id", current["_id"]).apply { putAll(v) }
    }

    private fun evaluate(e: BsonValue, doc: BsonDocument): BsonValue = when {
        e is BsonString && e.value.startsWith("\$\$") -> throw IllegalArgumentException("variables in update pipelines are not supported by the test kit: ${e.value}")
        e is BsonString && e.value.startsWith("$") -> DocumentQuery.get(doc, e.value.substring(1)) ?: BsonNull.VALUE
        e is BsonDocument && e.size == 1 && e.firstKey == "\$literal" -> e["\$literal"]!!
        e is BsonDocument && e.keys.any { it.startsWith("$") } -> throw IllegalArgumentException("expression ${e.firstKey} in an update pipeline is not supported by the test kit")
        e is BsonDocument -> BsonDocument().also { d -> e.forEach { (k, v) -> d[k] = evaluate(v, doc) } }
        e is BsonArray -> BsonArray(e.map { evaluate(it, doc) })
        else -> e
    }

    private fun document(stage: String, arg: BsonValue): BsonDocument {
        require(arg is BsonDocument) { "$stage specification must be an object" }
        return arg
    }

    private fun fields(arg: BsonValue): List<String> = when (arg) {
        is BsonString -> listOf(arg.value)
        is BsonArray -> arg.map { require(it is BsonString) { "\$unset specification must be a string or an array of strings" }; it.value }
        else -> throw IllegalArgumentException("\$unset specification must be a string or an array of strings")
    }
}
