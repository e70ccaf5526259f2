package dev.mooring.driver.internal

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDbPointer
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonJavaScriptWithScope
import org.bson.BsonRegularExpression
import org.bson.BsonString
import org.bson.BsonSymbol
import org.bson.BsonUndefined
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.types.ObjectId

class BsonSizesSpec : FunSpec({
    fun encodedSize(d: BsonDocument) = RawBsonDocument(d, BsonDocumentCodec()).sizeInBytes

    test("the computed size is the encoded size for values of every kind, names and strings in any script, nested raw documents") {
        val d = BsonDocument.parse(
            """{d: 1.5, s: "x", o: {_id: 1, z: [true, null]}, t: true, dt: {${'$'}date: 0}, n: null, i: 1, l: {${'$'}numberLong: "2"},
               ts: {${'$'}timestamp: {t: 1, i: 2}}, dec: {${'$'}numberDecimal: "1.5"}, oid: {${'$'}oid: "5f0000000000000000000000"},
               mn: {${'$'}minKey: 1}, mx: {${'$'}maxKey: 1}, code: {${'$'}code: "f()"}, "ключ": "значение €", "名前": "😀 a\u0000b"}""",
        )
            .append("bin", BsonBinary(byteArrayOf(1, 2, 3)))
            .append("old", BsonBinary(0x02.toByte(), byteArrayOf(4, 5)))
            .append("re", BsonRegularExpression("a.*", "i"))
            .append("sym", BsonSymbol("s"))
            .append("u", BsonUndefined())
            .append("cws", BsonJavaScriptWithScope("g()", BsonDocument("x", BsonInt32(1))))
            .append("ptr", BsonDbPointer("db.c", ObjectId()))
            .append("lone", BsonString("\uD800x"))
            .append("arr", BsonArray(List(123) { BsonInt32(it) }))
            .append("raw", RawBsonDocument(BsonDocument.parse("{a: [1, {b: 'c'}]}"), BsonDocumentCodec()))
            .append("raws", BsonArray(listOf(RawBsonDocument(BsonDocument.parse("{q: 1}"), BsonDocumentCodec()))))
        BsonSizes.document(d) shouldBe encodedSize(d)
        BsonSizes.document(BsonDocument()) shouldBe 5
    }

    test("a RawBsonDocument counts its length without being decoded") {
        // a valid length and terminator around an element of a type no decoder knows: decoding it would fail
        val bytes = byteArrayOf(12, 0, 0, 0, 0x55, 'a'.code.toByte(), 0, 1, 2, 3, 4, 0)
        BsonSizes.document(RawBsonDocument(bytes)) shouldBe 12
        BsonSizes.document(BsonDocument("document", RawBsonDocument(bytes))) shouldBe 4 + 1 + "document".length + 1 + 12 + 1
    }
})
