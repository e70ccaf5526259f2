package dev.mooring.driver.internal

import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.Hint
import dev.mooring.driver.Update
import dev.mooring.driver.WriteModel
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonWriter
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext
import org.bson.BsonReader

class ClientWriteOpsSpec : FunSpec({
    fun encodedSize(d: BsonDocument) = RawBsonDocument(d, BsonDocumentCodec()).sizeInBytes
    val codec = BsonDocumentCodec()
    fun op(model: WriteModel<BsonDocument>) = ClientWriteOps.of(3, ClientNamespacedWriteModel.of("db.c", model, codec), DocumentEncoder().batch(1))

    test("an op's size is the size of its ops entry as sent, for every kind and option") {
        val filter = BsonDocument.parse("{a: {\$gt: 1}, 'ü': 'ß'}")
        val models = listOf<WriteModel<BsonDocument>>(
            WriteModel.InsertOne(BsonDocument.parse("{x: 1, y: [1, 2, {z: 'w'}]}")),
            WriteModel.InsertOne(BsonDocument.parse("{_id: 'own', x: 1}")),
            WriteModel.UpdateOne(filter, Update.Operators(BsonDocument.parse("{\$set: {b: 1}}")), listOf(BsonDocument.parse("{'e.x': 1}")), BsonDocument("locale", org.bson.BsonString("fr")), Hint.Name("a_1"), true, BsonDocument("a", BsonInt32(1))),
            WriteModel.UpdateMany(filter, Update.Pipeline(listOf(BsonDocument.parse("{\$set: {b: 2}}")))),
            WriteModel.ReplaceOne(filter, BsonDocument.parse("{r: 'placement'}"), hint = Hint.Keys(BsonDocument("a", BsonInt32(1))), upsert = false),
            WriteModel.DeleteOne(filter),
            WriteModel.DeleteMany(filter, BsonDocument("locale", org.bson.BsonString("en"))),
        )
        for (m in models) {
            val o = op(m)
            o.size shouldBe encodedSize(o.document(0))
            o.size shouldBe encodedSize(o.document(7))
        }
    }

    test("an insert's document is encoded once, by its codec, and sized from its bytes without decoding them") {
        var encodes = 0
        // counts its encodings (it writes only an _id)
        val opaque = object : Codec<BsonDocument> {
            override fun encode(writer: BsonWriter, value: BsonDocument, encoderContext: EncoderContext) {
                encodes++
                writer.writeStartDocument()
                writer.writeInt32("_id", 9)
                writer.writeEndDocument()
            }
            override fun decode(reader: BsonReader, decoderContext: DecoderContext): BsonDocument = error("not used")
            override fun getEncoderClass(): Class<BsonDocument> = BsonDocument::class.java
        }
        val o = ClientWriteOps.of(0, ClientNamespacedWriteModel.of("db.c", WriteModel.InsertOne(BsonDocument("x", BsonInt32(1))), opaque), DocumentEncoder().batch(1))
        encodes shouldBe 1
        o.insertedId shouldBe BsonInt32(9)
        o.size shouldBe encodedSize(o.document(0))

        // an _id, then an element of a type no decoder knows: sizing the entry by decoding the document would fail
        val bytes = byteArrayOf(
            23, 0, 0, 0,
            0x10, '_'.code.toByte(), 'i'.code.toByte(), 'd'.code.toByte(), 0, 9, 0, 0, 0,
            0x55, 'a'.code.toByte(), 0, 1, 2, 3, 4, 5, 6,
            0,
        )
        val raw = ClientWriteOps.of(0, ClientNamespacedWriteModel.of("db.c", WriteModel.InsertOne(RawBsonDocument(bytes)), org.bson.codecs.RawBsonDocumentCodec()), DocumentEncoder().batch(1))
        raw.insertedId shouldBe BsonInt32(9)
        raw.size shouldBe 1 + "insert".length + 1 + 4 + 4 + 1 + "document".length + 1 + bytes.size + 1
    }
})
