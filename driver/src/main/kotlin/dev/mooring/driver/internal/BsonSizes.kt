package dev.mooring.driver.internal

import org.bson.BsonBinarySubType
import org.bson.BsonDocument
import org.bson.BsonSerializationException
import org.bson.BsonType
import org.bson.BsonValue
import org.bson.RawBsonDocument

/**
 * The encoded size in bytes of a BSON document (bsonspec.org), computed from the values without
 * encoding them: a [RawBsonDocument] inside counts its own length, names and strings their UTF-8
 * length. Encoding a document only to learn its size decodes every `RawBsonDocument` in it
 * (the `BsonDocumentCodec` iterates their entries) and writes everything once more. Stateless.
 */
internal object BsonSizes {
    fun document(doc: BsonDocument): Int {
        if (doc is RawBsonDocument) return doc.sizeInBytes
        var size = 4 + 1 // length, terminator
        for ((name, value) in doc) size += 1 + cstring(name) + value(value)
        return size
    }

    /** The size of [value] as an element's value (after its type byte and name). */
    fun value(value: BsonValue): Int = when (value.bsonType) {
        BsonType.DOUBLE, BsonType.INT64, BsonType.DATE_TIME, BsonType.TIMESTAMP -> 8
        BsonType.INT32 -> 4
        BsonType.BOOLEAN -> 1
        BsonType.NULL, BsonType.UNDEFINED, BsonType.MIN_KEY, BsonType.MAX_KEY -> 0
        BsonType.OBJECT_ID -> 12
        BsonType.DECIMAL128 -> 16
        BsonType.STRING -> string(value.asString().value)
        BsonType.SYMBOL -> string(value.asSymbol().symbol)
        BsonType.JAVASCRIPT -> string(value.asJavaScript().code)
        BsonType.DOCUMENT -> document(value.asDocument())
        BsonType.ARRAY -> {
            var size = 4 + 1
            value.asArray().values.forEachIndexed { i, item -> size += 1 + digits(i) + 1 + value(item) }
            size
        }
        BsonType.BINARY -> value.asBinary().let { b -> 4 + 1 + b.data.size + if (b.type == BsonBinarySubType.OLD_BINARY.value) 4 else 0 }
        BsonType.REGULAR_EXPRESSION -> value.asRegularExpression().let { cstring(it.pattern) + cstring(it.options) }
        BsonType.JAVASCRIPT_WITH_SCOPE -> value.asJavaScriptWithScope().let { 4 + string(it.code) + document(it.scope) }
        BsonType.DB_POINTER -> string(value.asDBPointer().namespace) + 12
        else -> throw BsonSerializationException("cannot size a BSON value of type ${value.bsonType}")
    }

    private fun string(s: String): Int = 4 + utf8(s) + 1

    private fun cstring(s: String): Int = utf8(s) + 1

    private fun digits(i: Int): Int = if (i < 10) 1 else i.toString().length

    /** The bytes the BSON writer writes for [s]: UTF-8 by code point (a lone surrogate as 3 bytes, as the writer does). */
    private fun utf8(s: String): Int {
        var n = 0
        var i = 0
        while (i < s.length) {
            val c = s[i]
            n += when {
                c.code < 0x80 -> 1
                c.code < 0x800 -> 2
                Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s[i + 1]) -> { i++; 4 }
                else -> 3
            }
            i++
        }
        return n
    }
}
