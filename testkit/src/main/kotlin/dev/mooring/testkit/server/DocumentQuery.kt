package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonNull
import org.bson.BsonValue

/**
 * The query language of the test kit's in-memory collections, as mongod evaluates it for the
 * documents tests use: dotted paths; equality (an array field matches when an element does);
 * `$eq $ne $gt $gte $lt $lte $in $nin $exists $not`; `$and $or $nor`; the `$where` sleep
 * ([WhereSleep]). Anything else is a BadValue ([IllegalArgumentException]). Also sort and
 * inclusion/exclusion projections. Pure; thread-safe.
 */
object DocumentQuery {
    /** True when [doc] matches [filter]; throws [IllegalArgumentException] for an unsupported or malformed filter. */
    fun matches(doc: BsonDocument, filter: BsonDocument): Boolean = filter.all { (k, v) ->
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
                fieldMatches(get(doc, k), v)
            }
        }
    }

    /** The value at the dotted [path] of [doc], or null. */
    fun get(doc: BsonDocument, path: String): BsonValue? {
        var current: BsonValue? = doc
        for (part in path.split('.')) {
            current = when (current) {
                is BsonDocument -> current[part]
                is BsonArray -> part.toIntOrNull()?.let { current.getOrNull(it) }
                else -> null
            }
        }
        return current
    }

    private fun fieldMatches(actual: BsonValue?, condition: BsonValue): Boolean {
        if (condition is BsonDocument && condition.isNotEmpty() && condition.firstKey.startsWith("$")) {
            return condition.all { (op, arg) -> operator(op, arg, actual) }
        }
        return equalsOrContains(actual, condition)
    }

    private fun equalsOrContains(actual: BsonValue?, expected: BsonValue): Boolean = when {
        expected is BsonNull -> actual == null || actual is BsonNull
        actual == null -> false
        compare(actual, expected) == 0 && sameKind(actual, expected) -> true
        actual is BsonArray && expected !is BsonArray -> actual.any { compare(it, expected) == 0 && sameKind(it, expected) }
        else -> false
    }

    private fun operator(op: String, arg: BsonValue, actual: BsonValue?): Boolean = when (op) {
        "\$eq" -> equalsOrContains(actual, arg)
        "\$ne" -> !equalsOrContains(actual, arg)
        "\$gt" -> ordered(actual, arg) { it > 0 }
        "\$gte" -> ordered(actual, arg) { it >= 0 }
        "\$lt" -> ordered(actual, arg) { it < 0 }
        "\$lte" -> ordered(actual, arg) { it <= 0 }
        "\$in" -> {
            require(arg.isArray) { "\$in needs an array" }
            arg.asArray().any { equalsOrContains(actual, it) }
        }
        "\$nin" -> {
            require(arg.isArray) { "\$nin needs an array" }
            arg.asArray().none { equalsOrContains(actual, it) }
        }
        "\$exists" -> (actual != null) == truthy(arg)
        "\$not" -> {
            require(arg.isDocument) { "\$not needs a document" }
            !fieldMatches(actual, arg)
        }
        else -> throw IllegalArgumentException("unknown operator: $op")
    }

    private fun ordered(actual: BsonValue?, arg: BsonValue, test: (Int) -> Boolean): Boolean {
        if (actual == null) return false
        val candidates = if (actual is BsonArray) actual.toList() else listOf(actual)
        return candidates.any { sameKind(it, arg) && test(compare(it, arg)) }
    }

    private fun sameKind(a: BsonValue, b: BsonValue) = (a.isNumber && b.isNumber) || a.bsonType == b.bsonType

    /** BSON comparison for values of one kind (numbers across int32/int64/double); other kinds compare by type order. */
    fun compare(a: BsonValue?, b: BsonValue?): Int {
        if (a == null || b == null) return (if (a == null) 0 else 1) - (if (b == null) 0 else 1)
        if (a.isNumber && b.isNumber) return a.asNumber().doubleValue().compareTo(b.asNumber().doubleValue())
        if (a.bsonType != b.bsonType) return a.bsonType.value.compareTo(b.bsonType.value)
        return when {
            a.isString -> a.asString().value.compareTo(b.asString().value)
            a.isBoolean -> a.asBoolean().value.compareTo(b.asBoolean().value)
            a.isDateTime -> a.asDateTime().value.compareTo(b.asDateTime().value)
            a.isObjectId -> a.asObjectId().value.compareTo(b.asObjectId().value)
            a == b -> 0
            else -> a.toString().compareTo(b.toString())
        }
    }

    /** [docs] sorted by the `{field: 1 | -1}` [sort] specification. */
    fun sort(docs: List<BsonDocument>, sort: BsonDocument?): List<BsonDocument> {
        if (sort == null || sort.isEmpty()) return docs
        val comparator = sort.entries.map { (field, dir) ->
            val sign = if (dir.isNumber && dir.asNumber().intValue() < 0) -1 else 1
            Comparator<BsonDocument> { x, y -> sign * compare(get(x, field), get(y, field)) }
        }.reduce { a, b -> a.then(b) }
        return docs.sortedWith(comparator)
    }

    /**
     * [doc] with the [projection] applied: an inclusion projection keeps `_id` (unless excluded)
     * and the named top-level fields; an exclusion projection drops the named fields.
     */
    fun project(doc: BsonDocument, projection: BsonDocument?): BsonDocument {
        if (projection == null || projection.isEmpty()) return doc
        val inclusions = projection.filter { it.key != "_id" }.values.map { truthy(it) }.distinct()
        require(inclusions.size <= 1) { "Cannot do exclusion on field in inclusion projection" }
        val inclusion = inclusions.singleOrNull() ?: truthy(projection["_id"]!!)
        val keepId = projection["_id"]?.let { truthy(it) } ?: true
        return if (inclusion) {
            BsonDocument().also { out ->
                if (keepId) doc["_id"]?.let { out["_id"] = it }
                projection.keys.filter { it != "_id" }.forEach { k -> doc[k]?.let { out[k] = it } }
            }
        } else {
            BsonDocument().also { out -> doc.forEach { (k, v) -> if (!(projection.containsKey(k) && !truthy(projection[k]!!))) out[k] = v } }
        }
    }

    /** A projection or `$exists` argument as a boolean (numbers: non-zero). */
    fun truthy(v: BsonValue): Boolean = when {
        v.isBoolean -> v.asBoolean().value
        v.isNumber -> v.asNumber().doubleValue() != 0.0
        else -> true
    }

    /** `{n: count}` ok reply helper for commands answering a number. */
    internal fun countReply(n: Int): BsonDocument = BsonDocument("n", BsonInt32(n)).append("ok", BsonInt32(1))
}
