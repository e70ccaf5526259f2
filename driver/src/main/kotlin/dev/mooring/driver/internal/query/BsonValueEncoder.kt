package dev.mooring.driver.internal.query

import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationStrategy
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.buildClassSerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.modules.SerializersModule
import kotlinx.serialization.serializer
import kotlinx.serialization.ExperimentalSerializationApi
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonDocumentWriter
import org.bson.BsonNull
import org.bson.BsonValue
import org.bson.codecs.EncoderContext
import org.bson.codecs.kotlinx.BsonConfiguration
import org.bson.codecs.kotlinx.KotlinSerializerCodec
import dev.mooring.driver.internal.NativeTypesSerializer

/**
 * Values encoded into [BsonValue]s exactly as bson-kotlinx writes them inside stored documents:
 * the value is written as the single element of a holder document through bson-kotlinx's own
 * encoder (the collections' [BsonConfiguration]), with the property's serializer and the given
 * module (contextual serializers such as Mooring's Instant-as-date resolve against it), and the
 * unannotated `kotlin.time.Instant` and `kotlin.uuid.Uuid` replaced as in stored documents ([NativeTypesSerializer]).
 * Stateless; thread-safe.
 */
internal object BsonValueEncoder {
    private val CONFIGURATION = BsonConfiguration()
    private val CONTEXT: EncoderContext = EncoderContext.builder().build()

    /**
     * [value] of [field] encoded with [serializer] (else the module's serializer of its runtime
     * class); [IllegalArgumentException] naming [field] when the serializer cannot write it (a
     * value of another type than the field's).
     */
    fun encode(field: String, serializer: KSerializer<*>?, value: Any?, module: SerializersModule): BsonValue {
        if (value == null) return BsonNull.VALUE
        return write(field, serializer ?: runtimeSerializer(value, module), value, module)
    }

    /**
     * [values] as a BSON array of elements of the collection property stored with
     * [collectionSerializer] (a List, Set or Array serializer): the values are put in a
     * collection of that kind and encoded as one, so each element is written exactly as in a
     * stored array.
     */
    fun encodeElements(field: String, collectionSerializer: KSerializer<*>?, values: List<Any?>, module: SerializersModule): BsonArray {
        if (collectionSerializer == null) return BsonArray(values.map { encode(field, null, it, module) })
        val container: Any = when (collectionSerializer.descriptor.serialName.removeSuffix("?")) {
            "kotlin.collections.LinkedHashSet", "kotlin.collections.HashSet" -> LinkedHashSet(values)
            "kotlin.Array" -> values.toTypedArray()
            else -> ArrayList(values)
        }
        val encoded = write(field, collectionSerializer, container, module)
        require(encoded is BsonArray) { "field '$field' is not stored as an array (${collectionSerializer.descriptor.serialName})" }
        return encoded
    }

    private fun write(field: String, serializer: KSerializer<*>, value: Any, module: SerializersModule): BsonValue {
        @Suppress("UNCHECKED_CAST")
        val holder = Holder.Serializer(serializer as KSerializer<Any>)
        // through the collections' own native-types wrapper: an unannotated Instant or Uuid is a BSON date / binary 4 here too
        @Suppress("UNCHECKED_CAST")
        val codec = KotlinSerializerCodec.create(Holder::class as kotlin.reflect.KClass<Holder<Any>>, NativeTypesSerializer.of(holder), module, CONFIGURATION)
        val document = BsonDocument()
        try {
            BsonDocumentWriter(document).use { codec.encode(it, Holder(value), CONTEXT) }
        } catch (e: ClassCastException) {
            throw IllegalArgumentException(
                "a ${value::class.qualifiedName} cannot be a value of field '$field' (stored with ${serializer.descriptor.serialName})",
                e,
            )
        }
        return document[Holder.FIELD] ?: BsonNull.VALUE
    }

    @OptIn(ExperimentalSerializationApi::class)
    private fun runtimeSerializer(value: Any, module: SerializersModule): KSerializer<*> =
        module.getContextual(value::class) ?: module.serializer(value.javaClass)

    /** A document of one field holding the value being encoded. */
    private class Holder<T : Any>(val value: T) {
        class Serializer<T : Any>(private val valueSerializer: KSerializer<T>) : KSerializer<Holder<T>> {
            override val descriptor: SerialDescriptor = buildClassSerialDescriptor("dev.mooring.driver.query.Value") {
                element(FIELD, valueSerializer.descriptor)
            }

            override fun serialize(encoder: Encoder, value: Holder<T>) {
                val composite = encoder.beginStructure(descriptor)
                composite.encodeSerializableElement(descriptor, 0, valueSerializer, value.value)
                composite.endStructure(descriptor)
            }

            override fun deserialize(decoder: Decoder): Holder<T> = throw UnsupportedOperationException("values are only encoded")
        }

        companion object {
            const val FIELD = "v"
        }
    }
}
