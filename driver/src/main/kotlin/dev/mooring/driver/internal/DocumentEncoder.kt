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
 * 1 KB ... 4 MB: about twice its size in garbage). The documents of one call ([batch]) share their
 * arrays and one writer. An insert's `BsonDocument` without `_id` gets its generated ObjectId
 * written as the first field while it is encoded, not prepended by a copy of the encoded bytes.
 * The caller's document is never changed.
 *
 * Thread-safe: the size hint is a racy hint, never a limit.
 */
internal class DocumentEncoder {
    @Volatile private var sizeHint: Int = MIN_HINT

    /** [document] as BSON bytes, encoded by [codec] (a [RawBsonDocument] is returned as is). */
    fun <T : Any> encode(document: T, codec: Codec<T>): RawBsonDocument = batch(1).encode(document, codec)

    /** An encoder for the [expected] documents of one call (a bulk write's statements). */
    fun batch(expected: Int): Batch = Batch(expected)

    /**
     * Encodes one call's documents one after the other with one [BsonBinaryWriter] into shared
     * arrays ("chunks"), each document a [RawBsonDocument] view of its bytes: a chunk holds about
     * the documents still expected at the last document's size, at most [CHUNK_BYTES] (a document
     * larger than that gets a chunk of its own, about its size). Per document this saves the
     * writer, its settings and state stack, the output buffer, and the unused end of an array
     * sized for it (about 500 bytes of a small document's 1.4 KB). A chunk lives as long as any of
     * its documents (the call's statements). Not thread-safe: one per call.
     */
    inner class Batch internal constructor(private var remaining: Int) {
        private var out: BasicOutputBuffer? = null
        private var writer: BsonBinaryWriter? = null

        /** The size in bytes of the document returned last. */
        var lastSize: Int = 0
            private set

        /** [document] as BSON bytes, encoded by [codec] (a [RawBsonDocument] is returned as is). */
        fun <T : Any> encode(document: T, codec: Codec<T>): RawBsonDocument = when (document) {
            is RawBsonDocument -> document.also { lastSize = it.sizeInBytes }
            else -> write { codec.encode(it, document, ENCODER) }
        }

        /** The `_id` of the document [encodeForInsert] returned last. */
        var lastId: BsonValue? = null
            private set

        /**
         * [document] as BSON bytes with an `_id` (crud.md "Generated identifiers"), that `_id` then
         * in [lastId]: the document's own, else a new ObjectId as the first field. For a
         * `BsonDocument` encoded by the default `BsonDocumentCodec` (its own registry of value
         * codecs, which [writeWithId] writes the values with) the `_id` is looked up in its map and
         * a generated one is written first during the encoding; other documents, and a
         * `BsonDocumentCodec` given another registry, are encoded by their codec, then given one by
         * [DocumentCodec.withId].
         */
        fun <T : Any> encodeForInsert(document: T, codec: Codec<T>): RawBsonDocument {
            if (document is BsonDocument && document !is RawBsonDocument && codec.javaClass == BsonDocumentCodec::class.java &&
                (codec as BsonDocumentCodec).codecRegistry === VALUE_REGISTRY
            ) {
                document["_id"]?.let { id -> return encode(document, codec).also { lastId = id } }
                val id = BsonObjectId(ObjectId())
                return write { writeWithId(it, document, id) }.also { lastId = id }
            }
            val encoded = encode(document, codec)
            val (raw, id) = DocumentCodec.withId(encoded)
            // a copy with the generated _id prepended has another size; the document as is keeps the one encode read
            if (raw !== encoded) lastSize = raw.sizeInBytes
            lastId = id
            return raw
        }

        private inline fun write(block: (BsonBinaryWriter) -> Unit): RawBsonDocument {
            val hint = sizeHint
            var o = out
            var w = writer
            if (o == null || w == null || o.internalBuffer.size - o.position < hint) {
                val capacity = (hint.toLong() * remaining.coerceAtLeast(1)).coerceAtMost(CHUNK_BYTES.toLong()).toInt().coerceAtLeast(hint)
                o = BasicOutputBuffer(capacity)
                w = BsonBinaryWriter(o)
                out = o
                writer = w
            }
            val start = o.position
            try {
                block(w)
            } catch (e: Throwable) {
                // the writer stopped inside a document: a later document of this call starts a new chunk
                out = null
                writer = null
                throw e
            }
            val size = o.position - start
            remaining--
            lastSize = size
            sizeHint = (size + size / 8 + 64).coerceIn(MIN_HINT, MAX_HINT)
            // read after the write: a document larger than the chunk's room moved the chunk into a larger array
            return RawBsonDocument(o.internalBuffer, start, size)
        }
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

        /** The most a chunk of small documents holds. */
        const val CHUNK_BYTES = 1024 * 1024
    }
}
