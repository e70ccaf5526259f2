package dev.mooring.spec.unified

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonType
import org.bson.BsonValue

/**
 * The unified test format's "Evaluating Matches": [matches] compares an expected value (parsed
 * from the test's Extended JSON) with an actual BSON value. Root-level documents may have extra
 * fields, nested ones may not; numbers compare by value across int32/int64/double; the special
 * operators `$$exists`, `$$type`, `$$unsetOrMatches`, `$$lte`, `$$matchAsDocument` and
 * `$$matchAsRoot` are supported. Another operator starting with `$$` fails loudly
 * ([UnsupportedOperationException]); a misused one (an unknown `$$type` alias, `$$exists` outside a
 * document field, `$$lte` with no number) is the file's error ([UnifiedTestFailure.InvalidTestFile]). Pure.
 */
object ValueMatching {
    /** True when [actual] matches [expected]; [root] allows extra fields in a top-level document. */
    fun matches(expected: BsonValue, actual: BsonValue?, root: Boolean = true): Boolean {
        if (expected is BsonDocument && isOperator(expected)) return operator(expected, actual, root)
        return when (expected) {
            is BsonDocument -> {
                if (actual !is BsonDocument) return false
                for ((key, value) in expected) {
                    if (value is BsonDocument && isOperator(value)) {
                        when (value.firstKey) {
                            "\$\$exists" -> if (value[value.firstKey]!!.asBoolean().value != actual.containsKey(key)) return false
                            "\$\$unsetOrMatches" -> {
                                val inner = value[value.firstKey]!!
                                // {$$unsetOrMatches: {$$exists: b}} (change-streams' resume checks): $$exists still applies to the field
                                val present = actual.containsKey(key)
                                if (inner is BsonDocument && isOperator(inner) && inner.firstKey == "\$\$exists") {
                                    if (present && !inner[inner.firstKey]!!.asBoolean().value) return false
                                } else if (present && !matches(inner, actual[key], false)) {
                                    return false
                                }
                            }
                            else -> if (!operator(value, actual[key], false)) return false
                        }
                        continue
                    }
                    if (!actual.containsKey(key) || !matches(value, actual[key], false)) return false
                }
                root || actual.keys.all { it in expected.keys }
            }
            is BsonArray -> actual is BsonArray && actual.size == expected.size && expected.indices.all { matches(expected[it], actual[it], false) }
            else -> actual != null && scalarEquals(expected, actual)
        }
    }

    /**
     * An operation's `expectResult`: for the operations that return an iterable of documents
     * ([ITERABLE_RESULTS]) each element of an expected array is matched as a root-level document
     * ("Allowing Extra Fields in Root-level Documents"); any other result is matched as a root value.
     */
    fun matchesResult(operation: String, expected: BsonValue, actual: BsonValue?): Boolean =
        if (operation in ITERABLE_RESULTS && expected is BsonArray && expected.none { it is BsonDocument && isOperator(it) }) {
            actual is BsonArray && actual.size == expected.size && expected.indices.all { matches(expected[it], actual[it], true) }
        } else {
            matches(expected, actual)
        }

    /** The operations whose result is an iterable of root-level documents (unified-test-format.md "Examples of Root-level Documents"). */
    val ITERABLE_RESULTS: Set<String> = setOf(
        "aggregate", "find", "listCollections", "listDatabases", "listIndexes", "listSearchIndexes", "runCursorCommand",
    )

    private fun isOperator(d: BsonDocument) = d.size == 1 && d.firstKey.startsWith("\$\$")

    private fun operator(op: BsonDocument, actual: BsonValue?, root: Boolean): Boolean {
        val arg = op[op.firstKey]!!
        return when (op.firstKey) {
            "\$\$type" -> actual != null && typeNames(arg).any { typeMatches(it, actual) }
            "\$\$unsetOrMatches" -> actual == null || matches(arg, actual, root)
            "\$\$lte" -> if (!arg.isNumber) invalidTest("\$\$lte needs a number, got $arg") else actual != null && actual.isNumber && arg.isNumber && actual.asNumber().doubleValue() <= arg.asNumber().doubleValue()
            // an actual string that is no Extended JSON document does not match (it cannot be decoded)
            "\$\$matchAsDocument" -> actual != null && actual.isString &&
                (runCatching { BsonDocument.parse(actual.asString().value) }.getOrNull()?.let { matches(arg, it, false) } ?: false)
            "\$\$matchAsRoot" -> matches(arg, actual, true)
            "\$\$exists" -> invalidTest("\$\$exists is only valid as the value of a document field")
            else -> throw UnsupportedOperationException("special operator ${op.firstKey}")
        }
    }

    private fun typeNames(arg: BsonValue): List<String> =
        if (arg is BsonArray) arg.map { it.asString().value } else listOf(arg.asString().value)

    private fun typeMatches(name: String, v: BsonValue): Boolean = when (name) {
        "double" -> v.bsonType == BsonType.DOUBLE
        "string" -> v.bsonType == BsonType.STRING
        "object" -> v.bsonType == BsonType.DOCUMENT
        "array" -> v.bsonType == BsonType.ARRAY
        "binData" -> v.bsonType == BsonType.BINARY
        "objectId" -> v.bsonType == BsonType.OBJECT_ID
        "bool" -> v.bsonType == BsonType.BOOLEAN
        "date" -> v.bsonType == BsonType.DATE_TIME
        "null" -> v.bsonType == BsonType.NULL
        "int" -> v.bsonType == BsonType.INT32
        "long" -> v.bsonType == BsonType.INT64
        "decimal" -> v.bsonType == BsonType.DECIMAL128
        "timestamp" -> v.bsonType == BsonType.TIMESTAMP
        "number" -> v.isNumber || v.bsonType == BsonType.DECIMAL128
        else -> invalidTest("\$\$type $name is no BSON type alias")
    }

    private fun scalarEquals(expected: BsonValue, actual: BsonValue): Boolean =
        if (expected.isNumber && actual.isNumber) expected.asNumber().doubleValue() == actual.asNumber().doubleValue() else expected == actual
}
