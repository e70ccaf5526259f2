package dev.mooring.driver.internal

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonWriter
import org.bson.BsonReader
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext
import java.util.IdentityHashMap

class DocumentEncoderBatchSpec : FunSpec({
    val codec = BsonDocumentCodec()
    fun small(i: Int) = BsonDocument("i", BsonInt32(i)).append("s", BsonString("x".repeat(i % 50)))

    test("a batch's documents share arrays, and each is its own document with its size and _id") {
        val batch = DocumentEncoder().batch(2_000)
        val encoded = (0 until 2_000).map { i ->
            val doc = batch.encodeForInsert(small(i), codec)
            batch.lastSize shouldBe doc.byteBuffer.remaining()
            Triple(doc, batch.lastId!!, i)
        }
        for ((doc, id, i) in encoded) {
            id.shouldBeInstanceOf<BsonObjectId>()
            doc.firstKey shouldBe "_id"
            doc shouldBe BsonDocument("_id", id).append("i", BsonInt32(i)).append("s", BsonString("x".repeat(i % 50)))
        }
        // about 90 KB of documents: a few chunks, not an array per document
        val arrays = IdentityHashMap<ByteArray, Unit>()
        encoded.forEach { (doc) -> arrays[doc.byteBuffer.array()] = Unit }
        (arrays.size <= 4) shouldBe true
        // ids are distinct
        encoded.map { it.second }.toSet() shouldHaveSize 2_000
    }

    test("a document larger than its chunk's room, then small ones again: every document intact") {
        val batch = DocumentEncoder().batch(10)
        val big = BsonDocument("_id", BsonInt32(-1)).append("b", BsonBinary(ByteArray(3 * 1024 * 1024) { it.toByte() }))
        val docs = listOf(small(1), small(2), big, small(3), big, small(4))
        val encoded = docs.map { batch.encode(it, codec).also { e -> batch.lastSize shouldBe e.byteBuffer.remaining() } }
        encoded.zip(docs).forEach { (e, d) -> e shouldBe d }
    }

    test("after a codec fails inside a document, the batch's next documents are encoded whole") {
        val failing = object : Codec<BsonDocument> {
            override fun encode(writer: BsonWriter, value: BsonDocument, encoderContext: EncoderContext) {
                writer.writeStartDocument()
                writer.writeInt32("half", 1)
                throw IllegalStateException("this codec fails part way")
            }

            override fun getEncoderClass(): Class<BsonDocument> = BsonDocument::class.java

            override fun decode(reader: BsonReader, decoderContext: DecoderContext): BsonDocument = codec.decode(reader, decoderContext)
        }
        val batch = DocumentEncoder().batch(3)
        batch.encode(small(1), codec) shouldBe small(1)
        shouldThrow<IllegalStateException> { batch.encode(small(2), failing) }
        batch.encode(small(3), codec) shouldBe small(3)
        batch.encodeForInsert(BsonDocument("_id", BsonInt32(9)), codec) shouldBe BsonDocument("_id", BsonInt32(9))
        batch.lastId shouldBe BsonInt32(9)
    }

    test("a RawBsonDocument is taken as it is, its size and top-level _id read from its bytes") {
        val raw = RawBsonDocument(BsonDocument("a", BsonInt32(1)).append("_id", BsonString("k")), codec)
        val batch = DocumentEncoder().batch(1)
        (batch.encodeForInsert(raw, org.bson.codecs.RawBsonDocumentCodec()) === raw) shouldBe true
        batch.lastId shouldBe BsonString("k")
        batch.lastSize shouldBe raw.byteBuffer.remaining()
    }
})
