package dev.mooring.driver.internal

import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.types.ObjectId
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Whether a BSON document has a top-level `_id`, read from its bytes without decoding: element
 * names are compared in place and values skipped by their type's size. `RawBsonDocument.get`
 * instead decodes every name it passes into a `String` (a 2.7 MB document of 94,000 fields
 * allocated 4.8 MB to find that it had no `_id`). Stateless.
 */
internal object TopLevelId {
    /**
     * The document's top-level `_id`, or null: an ObjectId, int32, int64 or string read from its
     * bytes (an insert's generated or own `_id` is one of these, and first in the document), any
     * other type decoded by `RawBsonDocument.get`.
     */
    fun find(raw: RawBsonDocument): BsonValue? {
        val b = raw.byteBuffer.asNIO().order(ByteOrder.LITTLE_ENDIAN)
        val at = idElement(b)
        if (at < 0) return null
        val value = at + 1 + 4 // the type byte, then "_id" and its NUL
        return when (b.get(at).toInt() and 0xff) {
            0x07 -> BsonObjectId(ObjectId(ByteArray(12).also { b.get(value, it) }))
            0x10 -> BsonInt32(b.getInt(value))
            0x12 -> BsonInt64(b.getLong(value))
            0x02 -> {
                val length = b.getInt(value) - 1
                BsonString(String(ByteArray(length).also { b.get(value + 4, it) }, Charsets.UTF_8))
            }
            else -> raw["_id"]
        }
    }

    /** The position in [b] of the type byte of the top-level `_id` element of the document at [b]'s position, or -1. */
    private fun idElement(b: ByteBuffer): Int {
        val start = b.position()
        val end = start + b.getInt(start) - 1 // the document's terminating 0
        var p = start + 4
        while (p < end) {
            val type = b.get(p).toInt() and 0xff
            p++
            val isId = b.get(p) == '_'.code.toByte() && b.get(p + 1) == 'i'.code.toByte() && b.get(p + 2) == 'd'.code.toByte() && b.get(p + 3) == 0.toByte()
            if (isId) return p - 1
            while (b.get(p) != 0.toByte()) p++
            p++
            p += valueSize(b, p, type)
        }
        return -1
    }

    /** The size of the value of BSON [type] at [p]. */
    private fun valueSize(b: ByteBuffer, p: Int, type: Int): Int = when (type) {
        0x01, 0x09, 0x11, 0x12 -> 8 // double, datetime, timestamp, int64
        0x02, 0x0D, 0x0E -> 4 + b.getInt(p) // string, JavaScript, symbol
        0x03, 0x04, 0x0F -> b.getInt(p) // document, array, code with scope (their length includes itself)
        0x05 -> 4 + 1 + b.getInt(p) // binary: length, subtype, bytes
        0x06, 0x0A, 0xFF, 0x7F -> 0 // undefined, null, min key, max key
        0x07 -> 12 // ObjectId
        0x08 -> 1 // boolean
        0x0B -> cstring(b, p).let { it + cstring(b, p + it) } // regex: pattern, options
        0x0C -> 4 + b.getInt(p) + 12 // DBPointer: string, ObjectId
        0x10 -> 4 // int32
        0x13 -> 16 // decimal128
        else -> throw org.bson.BsonSerializationException("unknown BSON type 0x${type.toString(16)} in a document")
    }

    private fun cstring(b: ByteBuffer, p: Int): Int {
        var q = p
        while (b.get(q) != 0.toByte()) q++
        return q - p + 1
    }
}
