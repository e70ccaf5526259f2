package dev.mooring.testkit.server

import de.bwaldvogel.mongo.bson.Document
import de.bwaldvogel.mongo.wire.bson.BsonDecoder
import de.bwaldvogel.mongo.wire.bson.BsonEncoder
import io.netty.buffer.Unpooled
import org.bson.BsonBinaryWriter
import org.bson.BsonDocument
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer

/**
 * The one conversion between the test kit's documents (org.bson [BsonDocument]) and those of its
 * data engine, mongo-java-server's [Document]: through their BSON bytes, so every value keeps its
 * exact BSON type (int32 / int64 / double / decimal128, binary subtypes, timestamps...). Pure.
 */
internal object BackendDocuments {
    /** [doc] as the engine's document. */
    fun toBackend(doc: BsonDocument): Document {
        val out = BasicOutputBuffer()
        BsonDocumentCodec().encode(BsonBinaryWriter(out), doc, EncoderContext.builder().build())
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(out.toByteArray()))
    }

    /** The engine's [doc] as a [BsonDocument]. */
    fun fromBackend(doc: Document): BsonDocument {
        val buffer = Unpooled.buffer()
        try {
            BsonEncoder.encodeDocument(doc, buffer)
            val bytes = ByteArray(buffer.readableBytes()).also { buffer.readBytes(it) }
            return RawBsonDocument(bytes).decode(BsonDocumentCodec())
        } finally {
            buffer.release()
        }
    }
}
