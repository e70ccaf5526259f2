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

/**
 * [times] copies of [bytes], each with one to three random bytes changed: each either fails with a
 * [WireFormatException] naming the reply or decodes as the driver's reader decodes it.
 */
private fun corrupt(bytes: ByteArray, seed: Int, times: Int) {
    val rnd = kotlin.random.Random(seed)
    repeat(times) {
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
        (bytes.size < dev.mooring.cmap.internal.wire.KeyCache.MIN_REPLY_BYTES) shouldBe true // the small reply's path; the batch's below
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
        // the same in a reply large enough for a batch (elements gathered first, then put in order)
        val out = org.bson.io.BasicOutputBuffer()
        org.bson.BsonBinaryWriter(out).use { w ->
            w.writeStartDocument()
            w.writeInt32("a", 1)
            w.writeInt32("b", 2)
            w.writeString("pad", "x".repeat(3000))
            w.writeStartDocument("d")
            w.writeInt32("k", 1)
            w.writeInt32("k", 2)
            w.writeEndDocument()
            w.writeInt32("a", 3)
            w.writeEndDocument()
        }
        val big = out.toByteArray()
        val bigDecoded = ByteReader.decodeBson(big, 0, big.size, "reply")
        bigDecoded shouldBe reference(big)
        bigDecoded.keys.toList() shouldBe listOf("a", "b", "pad", "d")
        bigDecoded.getInt32("a").value shouldBe 3
        bigDecoded.getDocument("d") shouldBe BsonDocument("k", BsonInt32(2))
    }

    test("corrupted documents either fail with WireFormatException or decode as the driver's reader decodes them") {
        corrupt(bytes, seed = 20261125, times = 5000)
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

    test("a batch's repeated keys are one String each, and keys whose hashes collide decode each as itself") {
        // "Aa" and "BB" hash alike, as do their concatenations: more of them than the cache probes
        val colliding = listOf("AaAaAa", "AaAaBB", "AaBBAa", "BBAaAa", "AaBBBB", "BBAaBB", "BBBBAa", "BBBBBB")
        val batch = org.bson.BsonArray((0 until 300).map { i ->
            BsonDocument("_id", BsonInt32(i)).append("name", BsonString("n$i")).append("Aa", BsonInt32(1)).append("BB", BsonInt32(2))
                .apply { colliding.forEachIndexed { k, key -> append(key, BsonInt32(k)) } }
                .append("cl\u00e9 \ud83d\ude00", BsonString("x")).append("nested", BsonDocument("inner", BsonDocument("name", BsonInt32(i))))
                .apply { (0 until 40).forEach { append("k${(it + i) % 40}", BsonInt32(it)) } }
                .append("list", org.bson.BsonArray((0 until i % 25).map { BsonDocument("name", BsonInt32(it)) }))
        })
        val reply = BsonDocument("cursor", BsonDocument("firstBatch", batch).append("id", org.bson.BsonInt64(0))).append("every", all).append("ok", org.bson.BsonDouble(1.0))
        val bytes = RawBsonDocument(reply, BsonDocumentCodec()).let { it.byteBuffer.array().copyOf(it.byteBuffer.remaining()) }
        val decoded = ByteReader.decodeBson(bytes, 0, bytes.size, "reply")
        decoded shouldBe reference(bytes)
        decoded shouldBe reply
        val docs = decoded.getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
        docs.map { d -> d.keys.toList() } shouldBe batch.map { d -> d.asDocument().keys.toList() }
        for (key in listOf("name", "nested", "AaAaAa", "k7")) {
            val instances = docs.map { d -> d.keys.first { it == key } }
            instances.all { it === instances[0] } shouldBe true
        }
        val inner = docs.map { d -> d.getDocument("nested").getDocument("inner").keys.single() }
        inner.all { it === docs[0].keys.first { k -> k == "name" } } shouldBe true
    }

    test("a corrupted batch either fails with WireFormatException or decodes as the driver's reader decodes it") {
        val batch = org.bson.BsonArray((0 until 40).map { i ->
            BsonDocument("_id", BsonInt32(i)).append("name", BsonString("n$i")).append("tags", org.bson.BsonArray(listOf(BsonString("a"), BsonInt32(i))))
                .append("sub", BsonDocument("name", BsonString("s")).append("n", BsonInt32(i)))
        })
        val reply = BsonDocument("cursor", BsonDocument("firstBatch", batch))
        val bytes = RawBsonDocument(reply, BsonDocumentCodec()).let { it.byteBuffer.array().copyOf(it.byteBuffer.remaining()) }
        (bytes.size >= dev.mooring.cmap.internal.wire.KeyCache.MIN_REPLY_BYTES) shouldBe true
        corrupt(bytes, seed = 20261129, times = 3000)
    }
})
