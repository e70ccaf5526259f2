package dev.mooring.cmap.internal.wire

import org.bson.BsonDocument

/**
 * A little-endian cursor over `bytes[start, end)` that never reads outside its bounds: every
 * length is checked before use and any violation is a [WireFormatException]. Not thread-safe
 * (one decoder owns it).
 */
internal class ByteReader(private val bytes: ByteArray, start: Int = 0, private val end: Int = bytes.size) {
    var position: Int = start
        private set

    val remaining: Int get() = end - position

    private fun need(n: Int, what: String) {
        if (n < 0 || n > remaining) throw WireFormatException("truncated message: $what needs $n bytes, $remaining left")
    }

    fun int32(what: String): Int {
        need(4, what)
        val p = position
        position += 4
        return int32At(bytes, p)
    }

    fun int64(what: String): Long {
        val lo = int32(what).toLong() and 0xffffffffL
        val hi = int32(what).toLong()
        return (hi shl 32) or lo
    }

    fun byte(what: String): Int {
        need(1, what)
        return bytes[position++].toInt() and 0xff
    }

    /** A NUL-terminated UTF-8 string that must end before [limit]. */
    fun cstring(what: String, limit: Int = end): String {
        var i = position
        while (i < limit && bytes[i] != 0.toByte()) i++
        if (i >= limit) throw WireFormatException("unterminated $what")
        val s = String(bytes, position, i - position, Charsets.UTF_8)
        position = i + 1
        return s
    }

    /** One BSON document whose declared length must fit before [limit]. Fully validated. */
    fun document(what: String, limit: Int = end): BsonDocument {
        if (limit - position < 5) throw WireFormatException("truncated message: $what needs at least 5 bytes")
        val len = int32At(bytes, position)
        if (len < 5 || len > limit - position) {
            throw WireFormatException("invalid BSON length $len for $what (${limit - position} bytes available)")
        }
        val doc = decodeBson(bytes, position, len, what)
        position += len
        return doc
    }

    fun skip(n: Int, what: String) {
        need(n, what)
        position += n
    }

    internal companion object {
        /** The BSON document at `bytes[offset, offset + length)` (see [BsonIn]); any defect is a [WireFormatException] naming [what]. */
        fun decodeBson(bytes: ByteArray, offset: Int, length: Int, what: String): BsonDocument {
            if (bytes[offset + length - 1] != 0.toByte()) throw WireFormatException("$what does not end with a NUL byte")
            try {
                return BsonIn.decode(bytes, offset, length)
            } catch (e: RuntimeException) {
                throw WireFormatException("malformed BSON in $what: ${e.message}", e)
            } catch (e: StackOverflowError) {
                throw WireFormatException("malformed BSON in $what: nested too deeply", null)
            }
        }
    }
}
