package dev.mooring.driver.internal

import java.util.Collections
import java.util.IdentityHashMap
import java.util.concurrent.ConcurrentHashMap
import kotlinx.serialization.DeserializationStrategy
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationStrategy
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.SerialKind
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder

/**
 * [inner] (a document class's serializer) with kotlinx.serialization's built-in string serializers
 * of `kotlin.time.Instant` and `kotlin.uuid.Uuid` replaced by the native BSON ones of
 * [NativeBsonSerializers], wherever [inner] reaches them: properties (nullable or not), elements of
 * lists, values of maps (map keys stay strings), nested classes, sealed subclasses, value classes.
 * A SerializersModule cannot do this (it never overrides a built-in serializer), so the replacement
 * happens in the encoder and decoder [inner] is given: [NativeTypesEncoder] / [NativeTypesDecoder]
 * wrap bson-kotlinx's and swap a serializer just before handing it on. Every other serializer,
 * `@Contextual` and module ones included, runs unchanged. Leaf serializers (ObjectId's, BsonValue's,
 * any primitive one) and structures that cannot hold a replaced type always run on bson-kotlinx's
 * own encoder or decoder, so serializers needing `BsonEncoder`/`BsonDecoder` keep working; only a
 * structure's serializer that may hold one (by its descriptor; contextual and open polymorphic ones
 * count as may) runs on the wrappers, which are not `BsonEncoder`/`BsonDecoder` (bson-kotlinx seals
 * those interfaces).
 *
 * Immutable but for a cache of descriptor analyses, which is thread-safe: one instance serves
 * concurrent encodes and decodes.
 */
internal class NativeTypesSerializer<T> private constructor(private val inner: KSerializer<T>) : KSerializer<T> {
    override val descriptor: SerialDescriptor get() = inner.descriptor

    /** Whether a descriptor's tree may hold a replaced type: its analyses, by descriptor. */
    private val reaches = ConcurrentHashMap<SerialDescriptor, Boolean>()

    override fun serialize(encoder: Encoder, value: T) {
        inner.serialize(NativeTypesEncoder(encoder, this), value)
    }

    override fun deserialize(decoder: Decoder): T = inner.deserialize(NativeTypesDecoder(decoder, this))

    /** The serializer to hand on for [serializer], the element [index] of a structure of [parent]. */
    fun <V> forElement(parent: SerialDescriptor, index: Int, serializer: SerializationStrategy<V>): SerializationStrategy<V> =
        if (isMapKey(parent, index)) serializer else forValue(serializer)

    /** The deserializer to hand on for [deserializer], the element [index] of a structure of [parent]. */
    fun <V> forElement(parent: SerialDescriptor, index: Int, deserializer: DeserializationStrategy<V>): DeserializationStrategy<V> =
        if (isMapKey(parent, index)) deserializer else forValue(deserializer)

    /** The native replacement of [serializer]; else [serializer] passing this replacement on when it may reach a replaced type; else [serializer]. */
    @Suppress("UNCHECKED_CAST")
    fun <V> forValue(serializer: SerializationStrategy<V>): SerializationStrategy<V> {
        NativeBsonSerializers.replacing(serializer)?.let { return it as SerializationStrategy<V> }
        return if (mayReach(serializer.descriptor)) Encoding(serializer, this) else serializer
    }

    /** The native replacement of [deserializer]; else [deserializer] passing this replacement on when it may reach a replaced type; else [deserializer]. */
    @Suppress("UNCHECKED_CAST")
    fun <V> forValue(deserializer: DeserializationStrategy<V>): DeserializationStrategy<V> {
        NativeBsonSerializers.replacing(deserializer)?.let { return it as DeserializationStrategy<V> }
        return if (mayReach(deserializer.descriptor)) Decoding(deserializer, this) else deserializer
    }

    /** Map keys are BSON field names: they keep their serializers (a Uuid key stays its string). */
    private fun isMapKey(parent: SerialDescriptor, index: Int): Boolean = parent.kind == StructureKind.MAP && index % 2 == 0

    private fun mayReach(descriptor: SerialDescriptor): Boolean =
        reaches[descriptor] ?: mayReach(descriptor, Collections.newSetFromMap(IdentityHashMap()), 0).also { reaches[descriptor] = it }

    /**
     * Whether [descriptor]'s tree may hold a replaced type. True when unknown: a contextual or open
     * polymorphic descriptor (its serializer is only known when encoding), or a tree deeper than
     * [MAX_DEPTH]. [seen] stops recursive structures.
     */
    @OptIn(ExperimentalSerializationApi::class)
    private fun mayReach(descriptor: SerialDescriptor, seen: MutableSet<SerialDescriptor>, depth: Int): Boolean {
        if (descriptor.serialName.removeSuffix("?") in NativeBsonSerializers.replacedSerialNames) return true
        val kind = descriptor.kind
        if (kind is PrimitiveKind || kind == SerialKind.ENUM) return false
        if (kind == SerialKind.CONTEXTUAL && descriptor.elementsCount == 0) return true
        if (depth > MAX_DEPTH) return true
        if (!seen.add(descriptor)) return false
        return (0 until descriptor.elementsCount).any { mayReach(descriptor.getElementDescriptor(it), seen, depth + 1) }
    }

    /** [inner] given a [NativeTypesEncoder] over the encoder it is handed. */
    private class Encoding<V>(private val inner: SerializationStrategy<V>, private val natives: NativeTypesSerializer<*>) : SerializationStrategy<V> {
        override val descriptor: SerialDescriptor get() = inner.descriptor

        override fun serialize(encoder: Encoder, value: V) {
            inner.serialize(NativeTypesEncoder(encoder, natives), value)
        }
    }

    /** [inner] given a [NativeTypesDecoder] over the decoder it is handed. */
    private class Decoding<V>(private val inner: DeserializationStrategy<V>, private val natives: NativeTypesSerializer<*>) : DeserializationStrategy<V> {
        override val descriptor: SerialDescriptor get() = inner.descriptor

        override fun deserialize(decoder: Decoder): V = inner.deserialize(NativeTypesDecoder(decoder, natives))
    }

    companion object {
        private const val MAX_DEPTH = 32

        /** [serializer] replacing the built-in Instant/Uuid serializers, or [serializer] itself when its tree cannot hold them. */
        fun <T> of(serializer: KSerializer<T>): KSerializer<T> {
            val natives = NativeTypesSerializer(serializer)
            return if (natives.mayReach(serializer.descriptor)) natives else serializer
        }
    }
}

