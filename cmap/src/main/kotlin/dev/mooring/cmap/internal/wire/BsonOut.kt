package dev.mooring.cmap.internal.wire

import org.bson.BsonBinarySubType
import org.bson.BsonDocument
import org.bson.BsonSerializationException
import org.bson.BsonType
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.io.BasicOutputBuffer

/**
 * Writes BSON straight into a [BasicOutputBuffer], the bytes `BsonBinaryWriter` with the
 * `BsonDocumentCodec` writes for the same values (bsonspec.org), without their per-document
 * contexts, state arrays and codec lookups. Errors are `BsonSerializationException`s (a NUL in a
 * key, nesting deeper than [MAX_DEPTH]). Stateless; thread-safe.
 *
 * Kept instead of the library's writer because it costs less CPU and allocates less on the
 * driver's commands: `bench/run --codec` measures both (bench/README, "The hand-written BSON codec").
 */
internal object BsonOut {
    /** The nesting limit of `BsonBinaryWriter` (its default maxSerializationDepth). */
    private const val MAX_DEPTH = 1024

    /** Writes the size placeholder of a document that started at the current position; returns that position. */
    fun startDocument(out: BasicOutputBuffer, depth: Int): Int {
        if (depth > MAX_DEPTH) throw BsonSerializationException("Maximum serialization depth exceeded (does the object being serialized have a circular reference?).")
        val start = out.position
        out.writeInt32(0)
        return start
    }

    /** Ends the document begun at [start]: the terminator, then its size. */
    fun endDocument(out: BasicOutputBuffer, start: Int) {
        out.write(0)
        out.writeInt32(start, out.position - start)
    }

    fun document(out: BasicOutputBuffer, doc: BsonDocument, depth: Int) {
        if (doc is RawBsonDocument) {
            val bytes = doc.byteBuffer
            out.writeBytes(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining())
            return
        }
        val start = startDocument(out, depth)
        for ((k, v) in doc.entries) element(out, k, v, depth)
        endDocument(out, start)
    }

    /** One element ([name]: [value]) of a document at nesting [depth]. */
    fun element(out: BasicOutputBuffer, name: String, value: BsonValue, depth: Int) {
        val type = value.bsonType
        out.write(type.value)
        out.writeCString(name)
        value(out, type, value, depth)
    }

    /** An array's element at [index]: its key written as ASCII digits, no string made for it. */
    private fun element(out: BasicOutputBuffer, index: Int, value: BsonValue, depth: Int) {
        val type = value.bsonType
        out.write(type.value)
        digits(out, index)
        out.write(0)
        value(out, type, value, depth)
    }

    private fun digits(out: BasicOutputBuffer, i: Int) {
        if (i >= 10) digits(out, i / 10)
        out.write('0'.code + i % 10)
    }

    private fun value(out: BasicOutputBuffer, type: BsonType, value: BsonValue, depth: Int) {
        when (type) {
            BsonType.INT32 -> out.writeInt32(value.asInt32().value)
            BsonType.INT64 -> out.writeInt64(value.asInt64().value)
            BsonType.DOUBLE -> out.writeDouble(value.asDouble().value)
            BsonType.STRING -> out.writeString(value.asString().value)
            BsonType.BOOLEAN -> out.write(if (value.asBoolean().value) 1 else 0)
            BsonType.DOCUMENT -> document(out, value.asDocument(), depth + 1)
            BsonType.ARRAY -> {
                val start = startDocument(out, depth + 1)
                var i = 0
                for (item in value.asArray().values) element(out, i++, item, depth + 1)
                endDocument(out, start)
            }
            BsonType.BINARY -> {
                val b = value.asBinary()
                val data = b.data
                if (b.type == BsonBinarySubType.OLD_BINARY.value) {
                    out.writeInt32(data.size + 4)
                    out.write(b.type.toInt())
                    out.writeInt32(data.size)
                } else {
                    out.writeInt32(data.size)
                    out.write(b.type.toInt())
                }
                out.writeBytes(data, 0, data.size)
            }
            BsonType.OBJECT_ID -> out.writeObjectId(value.asObjectId().value)
            BsonType.DATE_TIME -> out.writeInt64(value.asDateTime().value)
            BsonType.TIMESTAMP -> out.writeInt64(value.asTimestamp().value)
            BsonType.DECIMAL128 -> {
                val d = value.asDecimal128().value
                out.writeInt64(d.low)
                out.writeInt64(d.high)
            }
            BsonType.NULL, BsonType.UNDEFINED, BsonType.MIN_KEY, BsonType.MAX_KEY -> Unit
            BsonType.REGULAR_EXPRESSION -> {
                val r = value.asRegularExpression()
                out.writeCString(r.pattern)
                out.writeCString(r.options)
            }
            BsonType.JAVASCRIPT -> out.writeString(value.asJavaScript().code)
            BsonType.SYMBOL -> out.writeString(value.asSymbol().symbol)
            BsonType.JAVASCRIPT_WITH_SCOPE -> {
                val js = value.asJavaScriptWithScope()
                val start = out.position
                out.writeInt32(0)
                out.writeString(js.code)
                document(out, js.scope, depth + 1)
                out.writeInt32(start, out.position - start)
            }
            BsonType.DB_POINTER -> {
                val p = value.asDBPointer()
                out.writeString(p.namespace)
                out.writeObjectId(p.id)
            }
            else -> throw BsonSerializationException("cannot write a BSON value of type $type")
        }
    }
}
