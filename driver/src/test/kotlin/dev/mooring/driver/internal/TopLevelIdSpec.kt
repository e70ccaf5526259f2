package dev.mooring.driver.internal

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.serialization.modules.EmptySerializersModule
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonRegularExpression
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.configuration.CodecRegistries
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext
import org.bson.codecs.Codec
import org.bson.BsonReader
import org.bson.BsonWriter
import org.bson.BsonInt32
import org.bson.BsonString

/** [document] as an insert encodes it, with its `_id` (a batch of one). */
private fun <T : Any> DocumentCodec<T>.insertEncoded(document: T): Pair<RawBsonDocument, org.bson.BsonValue> = DocumentEncoder().insertEncoded(document, codec)

private fun <T : Any> DocumentEncoder.insertEncoded(document: T, codec: Codec<T>): Pair<RawBsonDocument, org.bson.BsonValue> =
    batch(1).let { b -> b.encodeForInsert(document, codec) to b.lastId!! }

class TopLevelIdSpec : FunSpec({
    fun raw(json: String) = RawBsonDocument(BsonDocument.parse(json), BsonDocumentCodec())

    test("finds a top-level _id after values of every kind, and only a top-level one") {
        val before = BsonDocument.parse(
            """{d: 1.5, s: "x", o: {_id: 1}, a: [1, {_id: 2}], t: true, dt: {${'$'}date: 0}, n: null, i: 1, l: {${'$'}numberLong: "2"},
               ts: {${'$'}timestamp: {t: 1, i: 2}}, dec: {${'$'}numberDecimal: "1.5"}, oid: {${'$'}oid: "5f0000000000000000000000"},
               mn: {${'$'}minKey: 1}, mx: {${'$'}maxKey: 1}, code: {${'$'}code: "f()"}}""",
        ).append("bin", BsonBinary(byteArrayOf(1, 2, 3))).append("re", BsonRegularExpression("a.*", "i"))
        TopLevelId.find(RawBsonDocument(before.clone(), BsonDocumentCodec())) shouldBe null
        TopLevelId.find(RawBsonDocument(before.clone().append("_id", org.bson.BsonInt32(7)), BsonDocumentCodec())) shouldBe org.bson.BsonInt32(7)
        TopLevelId.find(raw("{_id: 1, a: 2}")) shouldBe org.bson.BsonInt32(1)
        TopLevelId.find(raw("{_idx: 1, _i: 2, id: 3}")) shouldBe null
        TopLevelId.find(raw("{}")) shouldBe null
    }

    test("find reads a top-level _id of every kind, the first one when there are two, and null without one") {
        val oid = BsonObjectId()
        val values = listOf(oid, BsonInt32(-7), org.bson.BsonInt64(1L shl 40), BsonString("é-ünïcode"), BsonString(""),
            BsonDocument("x", BsonInt32(1)), org.bson.BsonDouble(2.5), BsonBinary(byteArrayOf(9)), org.bson.BsonNull.VALUE)
        for (v in values) {
            TopLevelId.find(RawBsonDocument(BsonDocument("a", BsonString("before")).append("_id", v).append("z", BsonInt32(1)), BsonDocumentCodec())) shouldBe v
            TopLevelId.find(RawBsonDocument(BsonDocument("_id", v), BsonDocumentCodec())) shouldBe v
        }
        // two top-level _id fields (only raw bytes can hold them): the first, as RawBsonDocument.get reads it
        val twice = byteArrayOf(23, 0, 0, 0, 0x10, '_'.code.toByte(), 'i'.code.toByte(), 'd'.code.toByte(), 0, 1, 0, 0, 0,
            0x10, '_'.code.toByte(), 'i'.code.toByte(), 'd'.code.toByte(), 0, 2, 0, 0, 0, 0)
        TopLevelId.find(RawBsonDocument(twice)) shouldBe RawBsonDocument(twice)["_id"]
        TopLevelId.find(raw("{a: {_id: 1}, b: [{_id: 2}]}")) shouldBe null
        // a document inside a larger array, as a batch's documents are
        val bytes = RawBsonDocument(BsonDocument("_id", BsonInt32(42)), BsonDocumentCodec()).byteBuffer.let { bb -> ByteArray(bb.remaining()).also { bb.get(it) } }
        TopLevelId.find(RawBsonDocument(ByteArray(5) + bytes + ByteArray(3), 5, bytes.size)) shouldBe BsonInt32(42)
    }

    test("a BsonDocument without _id is encoded with a new ObjectId first, the caller's document unchanged") {
        val codec = DocumentCodec.of(BsonDocument::class, EmptySerializersModule(), "db.c")
        val doc = BsonDocument.parse("{a: 1, b: {c: [1, 2]}}")
        val (encoded, id) = codec.insertEncoded(doc)
        id.shouldBeInstanceOf<BsonObjectId>()
        encoded.firstKey shouldBe "_id"
        encoded["_id"] shouldBe id
        BsonDocument(encoded.entries.drop(1).map { org.bson.BsonElement(it.key, it.value) }) shouldBe doc
        doc.containsKey("_id") shouldBe false

        val withOwn = BsonDocument.parse("{x: 1, _id: 'mine'}")
        val (own, ownId) = codec.insertEncoded(withOwn)
        ownId shouldBe org.bson.BsonString("mine")
        BsonDocument(own.entries.map { org.bson.BsonElement(it.key, it.value) }) shouldBe withOwn
    }

    test("encoding a large document then a small one gives both their exact bytes") {
        val codec = DocumentCodec.of(BsonDocument::class, EmptySerializersModule(), "db.c")
        val large = BsonDocument().apply { repeat(5_000) { append("f$it", org.bson.BsonString("v$it")) } }
        val small = BsonDocument.parse("{a: 1}")
        codec.encode(large) shouldBe RawBsonDocument(large, BsonDocumentCodec())
        codec.encode(small) shouldBe RawBsonDocument(small, BsonDocumentCodec())
        codec.encode(small).byteBuffer.remaining() shouldBe RawBsonDocument(small, BsonDocumentCodec()).byteBuffer.remaining()
    }

    test("a RawBsonDocument that starts inside a larger array gets its _id prepended from its own bytes") {
        val codec = DocumentCodec.of(RawBsonDocument::class, EmptySerializersModule(), "db.c")
        val bytes = RawBsonDocument(BsonDocument.parse("{a: 1, b: 'two'}"), BsonDocumentCodec()).let { r -> ByteArray(r.byteBuffer.remaining()).also { r.byteBuffer.get(it) } }
        val padded = ByteArray(7) { 0x55 } + bytes + ByteArray(3) { 0x66 }
        val (encoded, id) = codec.insertEncoded(RawBsonDocument(padded, 7, bytes.size))
        encoded.firstKey shouldBe "_id"
        encoded["_id"] shouldBe id
        encoded.getInt32("a").value shouldBe 1
        encoded.getString("b").value shouldBe "two"
    }

    test("a BsonDocument's generated _id is written first while it is encoded: the bytes of the document with that _id put first") {
        val codec = DocumentCodec.of(BsonDocument::class, EmptySerializersModule(), "db.c")
        val inner = RawBsonDocument(BsonDocument.parse("{r: [1, 2]}"), BsonDocumentCodec())
        val doc = BsonDocument.parse("{a: 1, b: {c: [1, {d: 'e'}]}, s: 'ü'}").append("raw", inner)
        val (encoded, id) = codec.insertEncoded(doc)
        val expected = BsonDocument("_id", id).also { d -> doc.forEach { (k, v) -> d[k] = v } }
        encoded shouldBe RawBsonDocument(expected, BsonDocumentCodec())
        encoded.byteBuffer.remaining() shouldBe RawBsonDocument(expected, BsonDocumentCodec()).byteBuffer.remaining()
    }

    test("a BsonDocumentCodec given its own registry writes the values with it, _id generated or not") {
        // a registry whose string codec upper-cases: the document must be written by it, not by the default value codecs
        val upper = object : Codec<BsonString> {
            override fun encode(writer: BsonWriter, value: BsonString, encoderContext: EncoderContext) = writer.writeString(value.value.uppercase())
            override fun decode(reader: BsonReader, decoderContext: DecoderContext): BsonString = BsonString(reader.readString())
            override fun getEncoderClass(): Class<BsonString> = BsonString::class.java
        }
        val codec = BsonDocumentCodec(CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(upper), BsonDocumentCodec().codecRegistry))
        val (encoded, id) = DocumentEncoder().insertEncoded(BsonDocument("s", BsonString("a")), codec)
        encoded.getString("s").value shouldBe "A"
        encoded["_id"] shouldBe id
        val (own, ownId) = DocumentEncoder().insertEncoded(BsonDocument("_id", BsonInt32(7)).append("s", BsonString("b")), codec)
        own.getString("s").value shouldBe "B"
        ownId shouldBe BsonInt32(7)
    }
})
