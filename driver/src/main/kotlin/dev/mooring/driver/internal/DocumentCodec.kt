package dev.mooring.driver.internal

import dev.mooring.driver.DocumentDecodingException
import kotlin.reflect.KClass
import kotlinx.serialization.InternalSerializationApi
import kotlinx.serialization.modules.SerializersModule
import kotlinx.serialization.serializer
import org.bson.BsonDocument
import org.bson.BsonDocumentReader
import org.bson.BsonReader
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec
import org.bson.codecs.DecoderContext
import org.bson.codecs.RawBsonDocumentCodec
import org.bson.codecs.kotlinx.BsonConfiguration
import org.bson.codecs.kotlinx.KotlinSerializerCodec
import org.bson.types.ObjectId
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * A collection's documents: [T] encoded with [codec] straight into [RawBsonDocument] bytes, and
 * reply documents decoded into [T]. Immutable; thread-safe when [codec] is (bson-kotlinx's and
 * the BSON codecs are).
 */
internal class DocumentCodec<T : Any>(val documentClass: KClass<T>, val codec: Codec<T>, private val namespace: String) {
    /** Encodes this collection's documents (one size hint per collection). */
    private val encoder = DocumentEncoder()

    /** [document] as BSON bytes. */
    fun encode(document: T): RawBsonDocument = encoder.encode(document, codec)

    /** An encoder for the [expected] documents of one call ([DocumentEncoder.Batch], with this collection's size hint). */
    fun batch(expected: Int): DocumentEncoder.Batch = encoder.batch(expected)

    /** [document] into [T]; [DocumentDecodingException] naming the namespace and field when the codec fails. */
    fun decode(document: BsonDocument): T {
        if (documentClass == BsonDocument::class && codec is BsonDocumentCodec) {
            @Suppress("UNCHECKED_CAST")
            return document as T
        }
        val reader: BsonReader = if (document is RawBsonDocument) document.asBsonReader() else BsonDocumentReader(document)
        return try {
            reader.use { codec.decode(it, DECODER) }
        } catch (e: ElementDecodingFailure) {
            throw DocumentDecodingException(namespace, e.field, documentClass.qualifiedName ?: documentClass.toString(), e.cause)
        } catch (e: RuntimeException) {
            val field = runCatching { reader.currentName }.getOrNull()
            throw DocumentDecodingException(namespace, field, documentClass.qualifiedName ?: documentClass.toString(), e)
        }
    }

    companion object {
        private val DECODER: DecoderContext = DecoderContext.builder().build()

        /**
         * The codec of [documentClass]: the BSON document codecs, else bson-kotlinx with [module] and
         * the class's serializer storing `kotlin.time.Instant` and `kotlin.uuid.Uuid` natively (see
         * [NativeTypesSerializer]).
         */
        @Suppress("UNCHECKED_CAST")
        fun <T : Any> of(documentClass: KClass<T>, module: SerializersModule, namespace: String): DocumentCodec<T> {
            val codec: Codec<T> = when (documentClass) {
                BsonDocument::class -> BsonDocumentCodec() as Codec<T>
                RawBsonDocument::class -> RawBsonDocumentCodec() as Codec<T>
                else -> kotlinCodec(documentClass, module)
            }
            return DocumentCodec(documentClass, codec, namespace)
        }

        @OptIn(InternalSerializationApi::class)
        private fun <T : Any> kotlinCodec(documentClass: KClass<T>, module: SerializersModule): Codec<T> {
            val name = documentClass.qualifiedName ?: documentClass.toString()
            val codec = try {
                // bson-kotlinx's own checks (annotations it refuses, classes it has no serializer for) first
                KotlinSerializerCodec.create(documentClass, module, BsonConfiguration())
                    ?.let { KotlinSerializerCodec.create(documentClass, NativeTypesSerializer.of(documentClass.serializer()), module, BsonConfiguration()) }
            } catch (e: RuntimeException) {
                throw IllegalArgumentException("no usable kotlinx.serialization serializer for $name: ${e.message}", e)
            }
            return codec ?: throw IllegalArgumentException(
                "no kotlinx.serialization serializer for $name: annotate it with @Serializable (or give the collection a codec)",
            )
        }

        /** [raw] with an `_id` field: as is when it has one, else with a new ObjectId prepended (crud.md "Generated identifiers"). */
        fun withId(raw: RawBsonDocument): Pair<RawBsonDocument, BsonValue> {
            TopLevelId.find(raw)?.let { return raw to it }
            return prependId(raw)
        }

        /** [raw], which has no `_id`, with a new ObjectId `_id` as its first field. */
        private fun prependId(raw: RawBsonDocument): Pair<RawBsonDocument, BsonValue> {
            val id = ObjectId()
            val src = raw.byteBuffer.asNIO().order(ByteOrder.LITTLE_ENDIAN)
            val oldLength = src.getInt(src.position())
            val out = ByteBuffer.allocate(oldLength + ID_ELEMENT_BYTES).order(ByteOrder.LITTLE_ENDIAN)
            out.putInt(oldLength + ID_ELEMENT_BYTES)
            out.put(0x07).put('_'.code.toByte()).put('i'.code.toByte()).put('d'.code.toByte()).put(0)
            out.put(id.toByteArray())
            val elements = src.duplicate().order(ByteOrder.LITTLE_ENDIAN)
            elements.position(elements.position() + 4).limit(elements.position() + oldLength - 4)
            out.put(elements)
            return RawBsonDocument(out.array()) to org.bson.BsonObjectId(id)
        }

        /** type byte + "_id\0" + 12 bytes of ObjectId. */
        private const val ID_ELEMENT_BYTES = 1 + 4 + 12
    }
}

/** The document's size in bytes. */
internal val RawBsonDocument.sizeInBytes: Int get() = byteBuffer.asNIO().order(ByteOrder.LITTLE_ENDIAN).let { it.getInt(it.position()) }
