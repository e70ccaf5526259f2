package dev.mooring.driver.internal

import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.SerializationStrategy
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.CompositeEncoder
import kotlinx.serialization.encoding.Encoder

/**
 * [encoder] (bson-kotlinx's) handing every serializer it is asked to run through
 * [NativeTypesSerializer.forValue] first, and wrapping the structures and inline values it begins.
 * Everything else is [encoder]'s. Confined to one encoding, as [encoder] is.
 */
@OptIn(ExperimentalSerializationApi::class)
internal class NativeTypesEncoder(private val encoder: Encoder, private val natives: NativeTypesSerializer<*>) : Encoder by encoder {
    override fun <T> encodeSerializableValue(serializer: SerializationStrategy<T>, value: T) {
        encoder.encodeSerializableValue(natives.forValue(serializer), value)
    }

    override fun <T : Any> encodeNullableSerializableValue(serializer: SerializationStrategy<T>, value: T?) {
        encoder.encodeNullableSerializableValue(natives.forValue(serializer), value)
    }

    override fun beginStructure(descriptor: SerialDescriptor): CompositeEncoder =
        NativeTypesCompositeEncoder(encoder.beginStructure(descriptor), natives)

    override fun beginCollection(descriptor: SerialDescriptor, collectionSize: Int): CompositeEncoder =
        NativeTypesCompositeEncoder(encoder.beginCollection(descriptor, collectionSize), natives)

    override fun encodeInline(descriptor: SerialDescriptor): Encoder = NativeTypesEncoder(encoder.encodeInline(descriptor), natives)
}

/** [encoder] with its elements' serializers passed through [NativeTypesSerializer.forElement]. Confined to one encoding. */
@OptIn(ExperimentalSerializationApi::class)
internal class NativeTypesCompositeEncoder(private val encoder: CompositeEncoder, private val natives: NativeTypesSerializer<*>) : CompositeEncoder by encoder {
    override fun <T> encodeSerializableElement(descriptor: SerialDescriptor, index: Int, serializer: SerializationStrategy<T>, value: T) {
        encoder.encodeSerializableElement(descriptor, index, natives.forElement(descriptor, index, serializer), value)
    }

    override fun <T : Any> encodeNullableSerializableElement(descriptor: SerialDescriptor, index: Int, serializer: SerializationStrategy<T>, value: T?) {
        encoder.encodeNullableSerializableElement(descriptor, index, natives.forElement(descriptor, index, serializer), value)
    }

    override fun encodeInlineElement(descriptor: SerialDescriptor, index: Int): Encoder =
        NativeTypesEncoder(encoder.encodeInlineElement(descriptor, index), natives)
}
