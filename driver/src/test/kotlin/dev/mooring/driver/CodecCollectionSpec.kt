package dev.mooring.driver

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonReader
import org.bson.BsonWriter
import org.bson.codecs.Codec
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext

private fun doc(json: String) = BsonDocument.parse(json)

/** A class kotlinx.serialization knows nothing of, with a hand-written org.bson codec. */
private class Point(val name: String, val x: Int) {
    override fun equals(other: Any?) = other is Point && other.name == name && other.x == x
    override fun hashCode() = name.hashCode() * 31 + x
    override fun toString() = "Point($name, $x)"
}

private object PointCodec : Codec<Point> {
    override fun encode(writer: BsonWriter, value: Point, encoderContext: EncoderContext) {
        writer.writeStartDocument()
        writer.writeString("_id", value.name)
        writer.writeInt32("x", value.x)
        writer.writeEndDocument()
    }

    override fun decode(reader: BsonReader, decoderContext: DecoderContext): Point {
        reader.readStartDocument()
        val name = reader.readString("_id")
        val x = reader.readInt32("x")
        reader.readEndDocument()
        return Point(name, x)
    }

    override fun getEncoderClass(): Class<Point> = Point::class.java
}

/** MongoDatabase.collection over an org.bson Codec (the Java facade's records and POJOs): encoded, decoded and named with it. */
class CodecCollectionSpec : FunSpec({
    timeout = 120_000

    test("a collection over an org.bson codec writes and reads its class; an undecodable document is named; withCodec changes the class") {
        WireServerFixture.withServer { f ->
            val points = f.db.collection("points", PointCodec)
            points.documentClass shouldBe Point::class
            points.codec shouldBe PointCodec
            points.insertMany(listOf(Point("a", 1), Point("b", 2)))
            points.find(doc("{x: {\$gt: 1}}")).toList() shouldContainExactly listOf(Point("b", 2))
            points.findOneAndReplace(doc("{_id: 'a'}"), Point("a", 10), FindOneAndReplaceOptions(returnDocument = ReturnDocument.AFTER)) shouldBe Point("a", 10)
            val raw = points.withCodec(org.bson.codecs.BsonDocumentCodec())
            raw.documentClass shouldBe BsonDocument::class
            raw.find(doc("{_id: 'a'}")).toList().single() shouldBe doc("{_id: 'a', x: 10}")
            raw.insertOne(doc("{_id: 'c', x: 'not a number'}"))
            val e = shouldThrow<DocumentDecodingException> { points.find(doc("{_id: 'c'}")).toList() }
            e.namespace shouldBe "test.points"
            e.message!!.contains("Point") shouldBe true
            raw.withCodec(PointCodec).countDocuments() shouldBe 3
        }
    }
})
