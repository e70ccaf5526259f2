package dev.mooring.cmap.internal.wire

import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBinarySubType
import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDbPointer
import org.bson.BsonDecimal128
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonJavaScript
import org.bson.BsonJavaScriptWithScope
import org.bson.BsonMaxKey
import org.bson.BsonMinKey
import org.bson.BsonNull
import org.bson.BsonObjectId
import org.bson.BsonRegularExpression
import org.bson.BsonString
import org.bson.BsonSymbol
import org.bson.BsonTimestamp
import org.bson.BsonUndefined
import org.bson.BsonValue
import org.bson.types.Decimal128
import org.bson.types.ObjectId

/**
 * Decodes one BSON document from `bytes[offset, offset + length)` into a [BsonDocument], the
 * values `BsonBinaryReader` with the `BsonDocumentCodec` produces (duplicate keys: the last value,
 * at the first one's position), without their reader contexts, buffers and element lists. Every
 * length is checked against its enclosing document; any violation (a truncated value, a size
 * that does not match the content, an unknown type, a boolean other than 0 or 1, a string
 * without its NUL) is a [WireFormatException]. Not thread-safe (one per decode).
 *
 * An array element's name is checked, not turned into a `String`. In a reply of at least
 * [KeyCache.MIN_REPLY_BYTES] (one that can hold a cursor's batch), a key met again (the same field
 * in each document of a batch) is the `String` made at its first occurrence ([KeyCache]), and a
 * document's elements are gathered first and then put into a map of their count's capacity (no
 * rehashing as it fills), an array's into a list of its exact size ([Batch]). A find reply of
 * tweets allocates about 6.8 KB per document instead of 10.5 KB (bench/README, "find-many's
 * decoding").
 *
 * Kept instead of the library's reader because it costs less CPU and allocates less on the
 * driver's replies: `bench/run --codec` measures both (bench/README, "The hand-written BSON codec").
 */
internal class BsonIn private constructor(private val bytes: ByteArray, private val batch: Batch?) {
    private var pos = 0

    /**
     * What a reply large enough to hold a batch decodes with: its [keys], and the elements of the
     * documents and arrays being decoded, innermost last (a document's elements are collected
     * here and then put into a map sized for them, with no rehash as it grows; an array's into a
     * list of its exact size). A small reply (a ping's, a hello's) has none: it puts its elements
     * straight into a map sized from its bytes, as it has few, and the stack would cost it more
     * than the rehashing it saves.
     */
    private class Batch(val keys: KeyCache) {
        var names = arrayOfNulls<String>(64)
        var values = arrayOfNulls<BsonValue>(64)
        var top = 0

        fun push(name: String?, value: BsonValue) {
            if (top == values.size) {
                names = names.copyOf(top * 2)
                values = values.copyOf(top * 2)
            }
            names[top] = name
            values[top++] = value
        }
    }

    private fun fail(message: String): Nothing = throw WireFormatException(message)

    private fun need(n: Int, limit: Int) {
        if (n < 0 || pos + n > limit) fail("a value runs past the end of its document")
    }

    private fun int32(limit: Int): Int {
        need(4, limit)
        val p = pos
        pos += 4
        return int32At(bytes, p)
    }

    private fun int64(limit: Int): Long {
        val lo = int32(limit).toLong() and 0xffffffffL
        return (int32(limit).toLong() shl 32) or lo
    }

    private fun cstring(limit: Int): String {
        var i = pos
        while (i < limit && bytes[i] != 0.toByte()) i++
        if (i >= limit) fail("unterminated key or cstring")
        val s = if (i - pos == 1 && bytes[pos] >= 0) ASCII[bytes[pos].toInt()] else String(bytes, pos, i - pos, Charsets.UTF_8)
        pos = i + 1
        return s
    }

    /** An element's name: a key repeated in the reply is one `String` when the reply has a [KeyCache]. */
    private fun key(limit: Int): String {
        var i = pos
        var hash = 0
        while (i < limit) {
            val b = bytes[i]
            if (b == 0.toByte()) break
            hash = KeyCache.hashOf(hash, b)
            i++
        }
        if (i >= limit) fail("unterminated key or cstring")
        val size = i - pos
        val s = when {
            size == 1 && bytes[pos] >= 0 -> ASCII[bytes[pos].toInt()]
            batch != null -> batch.keys.key(pos, size, hash)
            else -> String(bytes, pos, size, Charsets.UTF_8)
        }
        pos = i + 1
        return s
    }

    /** An array element's name, which the value does not keep: checked for its NUL, not decoded. */
    private fun skipKey(limit: Int) {
        var i = pos
        while (i < limit && bytes[i] != 0.toByte()) i++
        if (i >= limit) fail("unterminated key or cstring")
        pos = i + 1
    }

    private fun string(limit: Int): String {
        val size = int32(limit)
        if (size <= 0) fail("a BSON string has the non-positive size $size")
        need(size, limit)
        if (bytes[pos + size - 1] != 0.toByte()) fail("a BSON string is not NUL-terminated")
        val s = if (size == 2 && bytes[pos] >= 0) ASCII[bytes[pos].toInt()] else String(bytes, pos, size - 1, Charsets.UTF_8)
        pos += size
        return s
    }

    /** A document (or an array's document) whose size field is at [pos], within [limit]. */
    private fun documentEnd(limit: Int): Int {
        val start = pos
        val size = int32(limit)
        if (size < 5 || size > limit - start) fail("a BSON document has the invalid size $size")
        val end = start + size
        if (bytes[end - 1] != 0.toByte()) fail("a BSON document does not end with a NUL byte")
        return end
    }

    private fun document(limit: Int): BsonDocument {
        val b = batch ?: return smallDocument(limit)
        val base = gather(b, limit, array = false)
        val count = b.top - base
        // a HashMap holds capacity × 0.75 entries before it grows: ⌈count ÷ 0.75⌉
        val doc = BsonDocument((count * 4 + 2) / 3)
        for (i in base until b.top) doc[b.names[i]!!] = b.values[i]!!
        b.top = base
        return doc
    }

    private fun array(limit: Int): BsonArray {
        val b = batch ?: return smallArray(limit)
        val base = gather(b, limit, array = true)
        val array = BsonArray(b.top - base)
        for (i in base until b.top) array.add(b.values[i]!!)
        b.top = base
        return array
    }

    /** Reads the elements of the document (or [array]: without names) at [pos] onto [b]'s stack; returns where they start on it. */
    private fun gather(b: Batch, limit: Int, array: Boolean): Int {
        val end = documentEnd(limit)
        val base = b.top
        while (true) {
            val type = byte(end)
            if (type == 0) break
            val name = if (array) null.also { skipKey(end - 1) } else key(end - 1)
            b.push(name, value(type, end - 1))
        }
        if (pos != end) fail(if (array) "a BSON array's size does not match its content" else "a BSON document's size does not match its content")
        return base
    }

    /** A document of a small reply: straight into a map sized for what its bytes can hold (7 bytes an element at least), at most 16 slots. */
    private fun smallDocument(limit: Int): BsonDocument {
        val start = pos
        val end = documentEnd(limit)
        val doc = BsonDocument(minOf(16, ((end - start - 5) / 7 + 1) * 4 / 3 + 1))
        while (true) {
            val type = byte(end)
            if (type == 0) break
            val name = key(end - 1)
            doc[name] = value(type, end - 1)
        }
        if (pos != end) fail("a BSON document's size does not match its content")
        return doc
    }

    private fun smallArray(limit: Int): BsonArray {
        val end = documentEnd(limit)
        val array = BsonArray()
        while (true) {
            val type = byte(end)
            if (type == 0) break
            skipKey(end - 1)
            array.add(value(type, end - 1))
        }
        if (pos != end) fail("a BSON array's size does not match its content")
        return array
    }

    private fun byte(limit: Int): Int {
        need(1, limit)
        return bytes[pos++].toInt() and 0xff
    }

    private fun value(type: Int, limit: Int): BsonValue = when (type) {
        0x01 -> BsonDouble(java.lang.Double.longBitsToDouble(int64(limit)))
        0x02 -> BsonString(string(limit))
        0x03 -> document(limit)
        0x04 -> array(limit)
        0x05 -> {
            var size = int32(limit)
            if (size < 0) fail("a BSON binary has the negative size $size")
            val subtype = byte(limit).toByte()
            if (subtype == BsonBinarySubType.OLD_BINARY.value) {
                val repeated = int32(limit)
                if (repeated != size - 4) fail("Binary sub type OldBinary has inconsistent sizes")
                size -= 4
            }
            need(size, limit)
            BsonBinary(subtype, bytes.copyOfRange(pos, pos + size)).also { pos += size }
        }
        0x06 -> BsonUndefined()
        0x07 -> {
            need(12, limit)
            BsonObjectId(ObjectId(bytes.copyOfRange(pos, pos + 12))).also { pos += 12 }
        }
        0x08 -> when (byte(limit)) {
            0 -> BsonBoolean.FALSE
            1 -> BsonBoolean.TRUE
            else -> fail("a BSON boolean is neither 0 nor 1")
        }
        0x09 -> BsonDateTime(int64(limit))
        0x0A -> BsonNull.VALUE
        0x0B -> BsonRegularExpression(cstring(limit), cstring(limit))
        0x0C -> {
            val namespace = string(limit)
            need(12, limit)
            BsonDbPointer(namespace, ObjectId(bytes.copyOfRange(pos, pos + 12))).also { pos += 12 }
        }
        0x0D -> BsonJavaScript(string(limit))
        0x0E -> BsonSymbol(string(limit))
        0x0F -> {
            val start = pos
            val size = int32(limit)
            if (size < 14 || size > limit - start) fail("a BSON JavaScript with scope has the invalid size $size")
            val end = start + size
            val code = string(end)
            val scope = document(end)
            if (pos != end) fail("a BSON JavaScript with scope's size does not match its content")
            BsonJavaScriptWithScope(code, scope)
        }
        0x10 -> BsonInt32(int32(limit))
        0x11 -> BsonTimestamp(int64(limit))
        0x12 -> BsonInt64(int64(limit))
        0x13 -> {
            val low = int64(limit)
            val high = int64(limit)
            BsonDecimal128(Decimal128.fromIEEE754BIDEncoding(high, low))
        }
        0xFF -> BsonMinKey()
        0x7F -> BsonMaxKey()
        else -> fail("unknown BSON type 0x${Integer.toHexString(type)}")
    }

    internal companion object {
        /** The one-character ASCII strings, shared (as the driver's reader shares them). */
        private val ASCII = Array(128) { it.toChar().toString() }

        /** The document at `bytes[offset, offset + length)`, which must be exactly one document. */
        fun decode(bytes: ByteArray, offset: Int, length: Int): BsonDocument {
            val r = BsonIn(bytes, KeyCache.forReply(bytes, length)?.let { Batch(it) })
            r.pos = offset
            val doc = r.document(offset + length)
            if (r.pos != offset + length) fail(length, r.pos - offset)
            return doc
        }

        private fun fail(length: Int, used: Int): Nothing = throw WireFormatException("BSON length $length but content ended at $used")
    }
}
