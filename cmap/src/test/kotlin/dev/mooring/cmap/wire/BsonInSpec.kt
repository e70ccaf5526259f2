package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.ByteReader
import dev.mooring.cmap.internal.wire.WireFormatException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonBinaryReader
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import java.nio.ByteBuffer
import java.nio.ByteOrder

/** The driver's own decoding, the reference the direct decoder must match. */
private fun reference(bytes: ByteArray): BsonDocument =
    BsonBinaryReader(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)).use { BsonDocumentCodec().decode(it, DecoderContext.builder().build()) }

class BsonInSpec : FunSpec({
    val oid = org.bson.types.ObjectId()
    val all = BsonDocument("ok", org.bson.BsonDouble(1.0))
        .append("s", BsonString("c\u00e9\ud83d\ude00")).append("one", BsonString("x")).append("empty", BsonString(""))
        .append("i32", BsonInt32(-7)).append("i64", org.bson.BsonInt64(Long.MIN_VALUE))
        .append("t", org.bson.BsonBoolean.TRUE).append("f", org.bson.BsonBoolean.FALSE)
        .append("doc", BsonDocument("a", BsonDocument("b", org.bson.BsonArray(listOf(BsonString("x"), org.bson.BsonNull.VALUE, BsonDocument())))))
        .append("arr", org.bson.BsonArray((0 until 70).map { BsonInt32(it) })).append("emptyArr", org.bson.BsonArray())
        .append("bin", org.bson.BsonBinary(byteArrayOf(1, 2, 3))).append("uuid", org.bson.BsonBinary(java.util.UUID.randomUUID()))
        .append("old", org.bson.BsonBinary(org.bson.BsonBinarySubType.OLD_BINARY, byteArrayOf(9, 8)))
        .append("oid", org.bson.BsonObjectId(oid)).append("date", org.bson.BsonDateTime(-123)).append("ts", org.bson.BsonTimestamp(5, 6))
        .append("dec", org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("-1.25E+3"))).append("null", org.bson.BsonNull.VALUE)
        .append("undef", org.bson.BsonUndefined()).append("min", org.bson.BsonMinKey()).append("max", org.bson.BsonMaxKey())
        .append("re", org.bson.BsonRegularExpression("^a", "mi")).append("js", org.bson.BsonJavaScript("f()"))
        .append("sym", org.bson.BsonSymbol("s")).append("jsws", org.bson.BsonJavaScriptWithScope("g()", BsonDocument("v", BsonInt32(2))))
        .append("ptr", org.bson.BsonDbPointer("db.c", oid))
    val bytes = RawBsonDocument(all, BsonDocumentCodec()).let { it.byteBuffer.array().copyOf(it.byteBuffer.remaining()) }

    test("decodes every BSON type to the values the driver's reader gives") {
        val decoded = ByteReader.decodeBson(bytes, 0, bytes.size, "reply")
        decoded shouldBe reference(bytes)
        decoded.keys.toList() shouldBe all.keys.toList()
        decoded shouldBe all
    }

    test("a duplicate key keeps its first position and takes the last value, as the driver's codec does") {
        val dup = byteArrayOf(
            0x1a, 0, 0, 0,
            0x10, 'a'.code.toByte(), 0, 1, 0, 0, 0,
            0x10, 'b'.code.toByte(), 0, 2, 0, 0, 0,
            0x10, 'a'.code.toByte(), 0, 3, 0, 0, 0,
            0,
        )
        val decoded = ByteReader.decodeBson(dup, 0, dup.size, "reply")
        decoded shouldBe reference(dup)
        decoded.keys.toList() shouldBe listOf("a", "b")
    }

    test("corrupted documents either fail with WireFormatException or decode as the driver's reader decodes them") {
        val rnd = kotlin.random.Random(20261125)
        repeat(5000) {
            val bad = bytes.copyOf()
            repeat(1 + rnd.nextInt(3)) { bad[4 + rnd.nextInt(bad.size - 5)] = rnd.nextInt(256).toByte() }
            val ours = try {
                ByteReader.decodeBson(bad, 0, bad.size, "reply")
            } catch (e: WireFormatException) {
                e.message shouldContain "reply"
                null
            }
            if (ours != null) ours shouldBe reference(bad)
        }
    }

    test("a string without its NUL, a bad boolean and an unknown type are malformed BSON") {
        val s = RawBsonDocument(BsonDocument("s", BsonString("ab")), BsonDocumentCodec()).let { it.byteBuffer.array().copyOf(it.byteBuffer.remaining()) }
        s[s.size - 2] = 'c'.code.toByte()
        shouldThrow<WireFormatException> { ByteReader.decodeBson(s, 0, s.size, "reply") }.message shouldContain "malformed BSON"
        val b = RawBsonDocument(BsonDocument("b", org.bson.BsonBoolean.TRUE), BsonDocumentCodec()).let { it.byteBuffer.array().copyOf(it.byteBuffer.remaining()) }
        b[b.size - 2] = 2
        shouldThrow<WireFormatException> { ByteReader.decodeBson(b, 0, b.size, "reply") }
        b[4] = 0x20
        shouldThrow<WireFormatException> { ByteReader.decodeBson(b, 0, b.size, "reply") }.message shouldContain "malformed BSON"
    }
})
