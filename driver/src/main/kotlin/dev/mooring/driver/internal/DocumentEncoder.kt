package dev.mooring.driver.internal

import org.bson.BsonBinaryWriter
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec
import org.bson.codecs.EncoderContext
import org.bson.codecs.configuration.CodecRegistry
import org.bson.io.BasicOutputBuffer
import org.bson.types.ObjectId

/**
 * Encodes documents with their codec into [RawBsonDocument]s, each written once into one array
 * whose initial capacity is about the last document's size (a call's or a collection's documents
 * tend to be alike), instead of a chain of doubling arrays (a 2.7 MB document went through
 * 1 KB ... 4 MB: about twice its size in garbage). An insert's `BsonDocument` without `_id` gets
 * its generated ObjectId written as the first field while it is encoded, not prepended by a copy
 * of the encoded bytes. The caller's document is never changed.
 *
 * Thread-safe: the size hint is a racy hint, never a limit.
 */
internal class DocumentEncoder {
    @Volatile private var sizeHint: Int = MIN_HINT

    /** [document] as BSON bytes, encoded by [codec] (a [RawBsonDocument] is returned as is). */
    fun <T : Any> encode(document: T, codec: Codec<T>): RawBsonDocument = when (document) {
        is RawBsonDocument -> document
        else -> write { codec.encode(it, document, ENCODER) }
    }

    /**
     * [document] as BSON bytes with an `_id` (crud.md "Generated identifiers"), and that `_id`: the
     * document's own, else a new ObjectId as the first field. For a `BsonDocument` encoded by the
     * default `BsonDocumentCodec` (its own registry of value codecs, which [writeWithId] writes the
     * values with) the `_id` is looked up in its map and a generated one is written first during
     * the encoding; other documents, and a `BsonDocumentCodec` given another registry, are encoded
     * by their codec, then given one by [DocumentCodec.withId].
     */
    fun <T : Any> encodeWithId(document: T, codec: Codec<T>): Pair<RawBsonDocument, BsonValue> {
        if (document is BsonDocument && document !is RawBsonDocument && codec.javaClass == BsonDocumentCodec::class.java &&
            (codec as BsonDocumentCodec).codecRegistry === VALUE_REGISTRY
        ) {
            document["_id"]?.let { return encode(document, codec) to it }
            val id = BsonObjectId(ObjectId())
            return write { writeWithId(it, document, id) } to id
        }
        return DocumentCodec.withId(encode(document, codec))
    }

    /** [document]'s fields after [id] as `_id`: the bytes `BsonDocumentCodec` writes for them, `_id` first. */
    private fun writeWithId(writer: BsonBinaryWriter, document: BsonDocument, id: BsonObjectId) {
        writer.writeStartDocument()
        writer.writeObjectId("_id", id.value)
        for ((name, value) in document) {
            writer.writeName(name)
            ENCODER.encodeWithChildContext(VALUE_CODECS.get(value.javaClass), writer, value)
        }
        writer.writeEndDocument()
    }

    private inline fun write(block: (BsonBinaryWriter) -> Unit): RawBsonDocument {
        val out = BasicOutputBuffer(sizeHint)
        BsonBinaryWriter(out).use(block)
        val size = out.position
        sizeHint = (size + size / 8 + 64).coerceIn(MIN_HINT, MAX_HINT)
        return RawBsonDocument(out.internalBuffer, 0, size)
    }

    private companion object {
        val ENCODER: EncoderContext = EncoderContext.builder().build()

        /** The default `BsonDocumentCodec`'s registry (one shared instance, whatever codec object reports it). */
        val VALUE_REGISTRY: CodecRegistry = BsonDocumentCodec().codecRegistry

        /**
         * The codecs `BsonDocumentCodec` writes a document's values with, per value class (the
         * registry's own lookup allocates a cache key and a child registry per value).
         */
        val VALUE_CODECS = object : ClassValue<Codec<BsonValue>>() {
            @Suppress("UNCHECKED_CAST")
            override fun computeValue(type: Class<*>): Codec<BsonValue> = VALUE_REGISTRY.get(type) as Codec<BsonValue>
        }

        const val MIN_HINT = 256
        const val MAX_HINT = 16 * 1024 * 1024 + 16 * 1024
    }
}
