package dev.mooring.driver.internal

import dev.mooring.events.MooringException
import kotlinx.serialization.DeserializationStrategy
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.StructureKind
import kotlinx.serialization.encoding.CompositeDecoder
import kotlinx.serialization.encoding.Decoder

/**
 * [decoder] (bson-kotlinx's) handing every deserializer it is asked to run through
 * [NativeTypesSerializer.forValue] first, and wrapping the structures and inline values it begins.
 * Everything else is [decoder]'s. Confined to one decoding, as [decoder] is.
 */
@OptIn(ExperimentalSerializationApi::class)
internal class NativeTypesDecoder(private val decoder: Decoder, private val natives: NativeTypesSerializer<*>) : Decoder by decoder {
    override fun <T> decodeSerializableValue(deserializer: DeserializationStrategy<T>): T =
        decoder.decodeSerializableValue(natives.forValue(deserializer))

    override fun <T : Any> decodeNullableSerializableValue(deserializer: DeserializationStrategy<T?>): T? =
        decoder.decodeNullableSerializableValue(natives.forValue(deserializer))

    override fun beginStructure(descriptor: SerialDescriptor): CompositeDecoder =
        NativeTypesCompositeDecoder(decoder.beginStructure(descriptor), natives)

    override fun decodeInline(descriptor: SerialDescriptor): Decoder = NativeTypesDecoder(decoder.decodeInline(descriptor), natives)
}

/**
 * [decoder] with its elements' deserializers passed through [NativeTypesSerializer.forElement]. A
 * failure decoding an element of a class or list comes out as an [ElementDecodingFailure] naming
 * it (the innermost one: outer structures pass it on), since a native deserializer refusing a value
 * has already read it and bson-kotlinx's reader no longer tells its name. Confined to one decoding.
 */
@OptIn(ExperimentalSerializationApi::class)
internal class NativeTypesCompositeDecoder(private val decoder: CompositeDecoder, private val natives: NativeTypesSerializer<*>) : CompositeDecoder by decoder {
    override fun <T> decodeSerializableElement(descriptor: SerialDescriptor, index: Int, deserializer: DeserializationStrategy<T>, previousValue: T?): T =
        naming(descriptor, index) { decoder.decodeSerializableElement(descriptor, index, natives.forElement(descriptor, index, deserializer), previousValue) }

    override fun <T : Any> decodeNullableSerializableElement(
        descriptor: SerialDescriptor,
        index: Int,
        deserializer: DeserializationStrategy<T?>,
        previousValue: T?,
    ): T? = naming(descriptor, index) {
        decoder.decodeNullableSerializableElement(descriptor, index, natives.forElement(descriptor, index, deserializer), previousValue)
    }

    override fun decodeInlineElement(descriptor: SerialDescriptor, index: Int): Decoder =
        NativeTypesDecoder(decoder.decodeInlineElement(descriptor, index), natives)

    /** [block], its failure (unless already named) named after element [index] of [descriptor]; map elements are left to the map's own element. */
    private inline fun <R> naming(descriptor: SerialDescriptor, index: Int, block: () -> R): R = try {
        block()
    } catch (e: ElementDecodingFailure) {
        throw e
    } catch (e: RuntimeException) {
        if (descriptor.kind == StructureKind.MAP) throw e
        throw ElementDecodingFailure(descriptor.getElementName(index), e)
    }
}

/** Decoding the BSON field [field] failed with [cause] (see [NativeTypesCompositeDecoder]). */
internal class ElementDecodingFailure(val field: String, override val cause: RuntimeException) : MooringException("field '$field': ${cause.message}", cause)
