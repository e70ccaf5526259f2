package dev.mooring.driver.internal

import java.nio.ByteBuffer
import java.util.UUID
import kotlin.time.ExperimentalTime
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonBinary
import org.bson.BsonBinarySubType
import org.bson.BsonDateTime
import org.bson.BsonValue
import org.bson.codecs.kotlinx.BsonDecoder
import org.bson.codecs.kotlinx.BsonEncoder

/**
 * Serializers storing instants as BSON dates and UUIDs as binary subtype 4 (see `MooringSerializers`):
 * the contextual ones of [module] (for `@Contextual` properties) and, through [replacing], the ones
 * [NativeTypesSerializer] puts in place of kotlinx.serialization's built-in string serializers of
 * `kotlin.time.Instant` and `kotlin.uuid.Uuid`. BSON dates hold milliseconds: encoding cuts any
 * sub-millisecond part (to the millisecond at or before the instant), decoding gives whole
 * milliseconds. Decoding refuses any other BSON type (a string included: ISO-8601 or UUID text is
 * never parsed) with a [SerializationException]. With a non-BSON format they fall back to ISO-8601 /
 * canonical UUID strings. Stateless; thread-safe.
 */
@OptIn(ExperimentalTime::class, ExperimentalUuidApi::class, ExperimentalSerializationApi::class)
internal object NativeBsonSerializers {
    val module: SerializersModule = SerializersModule {
        contextual(kotlin.time.Instant::class, KotlinInstant)
        contextual(java.time.Instant::class, JavaInstant)
        contextual(Uuid::class, KotlinUuid)
        contextual(UUID::class, JavaUuid)
    }

    /** kotlinx.serialization's built-in serializers of the native types, each with the native one replacing it. */
    private val replacements: Map<Any, KSerializer<*>> = mapOf(
        kotlin.time.Instant.serializer() to KotlinInstant,
        Uuid.serializer() to KotlinUuid,
    )

    /** Serial names of the types [replacing] has a serializer for (also when nullable, with a `?` appended). */
    val replacedSerialNames: Set<String> = replacements.keys.map { (it as KSerializer<*>).descriptor.serialName }.toSet()

    /**
     * The native serializer replacing [serializer] when it is kotlinx.serialization's built-in
     * serializer of `kotlin.time.Instant` or `kotlin.uuid.Uuid` (the very object, so a user's own
     * serializer of these types, even one reusing the built-in descriptor, is never replaced); else null.
     */
    fun replacing(serializer: Any): KSerializer<*>? = replacements[serializer]

    /** A serializer over a native BSON value, with a string form for other formats. */
    private abstract class Native<T : Any>(name: String, private val typeName: String) : KSerializer<T> {
        override val descriptor: SerialDescriptor = PrimitiveSerialDescriptor(name, PrimitiveKind.STRING)

        abstract fun toBson(value: T): BsonValue

        abstract fun fromBson(value: BsonValue): T?

        abstract fun toText(value: T): String

        abstract fun fromText(text: String): T

        override fun serialize(encoder: Encoder, value: T) {
            if (encoder is BsonEncoder) encoder.encodeBsonValue(toBson(value)) else encoder.encodeString(toText(value))
        }

        override fun deserialize(decoder: Decoder): T {
            if (decoder !is BsonDecoder) return fromText(decoder.decodeString())
            val v = decoder.decodeBsonValue()
            return fromBson(v) ?: throw SerializationException(
                "expected $typeName as BSON ${expected()}, found ${v.bsonType}" +
                    if (v.isString) " (text is not parsed: store it as BSON ${expected()})" else "",
            )
        }

        abstract fun expected(): String
    }

    private abstract class DateSerializer<T : Any>(name: String, typeName: String) : Native<T>(name, typeName) {
        abstract fun millis(value: T): Long

        abstract fun ofMillis(ms: Long): T

        override fun toBson(value: T): BsonValue = BsonDateTime(millis(value))

        override fun fromBson(value: BsonValue): T? = if (value.isDateTime) ofMillis(value.asDateTime().value) else null

        override fun expected(): String = "date"
    }

    private abstract class UuidSerializer<T : Any>(name: String, typeName: String) : Native<T>(name, typeName) {
        abstract fun bits(value: T): Pair<Long, Long>

        abstract fun ofBits(msb: Long, lsb: Long): T

        override fun toBson(value: T): BsonValue {
            val (msb, lsb) = bits(value)
            return BsonBinary(BsonBinarySubType.UUID_STANDARD, ByteBuffer.allocate(16).putLong(msb).putLong(lsb).array())
        }

        override fun fromBson(value: BsonValue): T? {
            if (!value.isBinary) return null
            val b = value.asBinary()
            if (b.type != BsonBinarySubType.UUID_STANDARD.value || b.data.size != 16) {
                throw SerializationException("expected a UUID as BSON binary subtype 4 of 16 bytes, found subtype ${b.type} of ${b.data.size} bytes")
            }
            val buf = ByteBuffer.wrap(b.data)
            return ofBits(buf.long, buf.long)
        }

        override fun expected(): String = "binary subtype 4"
    }

    private object KotlinInstant : DateSerializer<kotlin.time.Instant>("dev.mooring.KotlinInstantAsDate", "kotlin.time.Instant") {
        override fun millis(value: kotlin.time.Instant): Long = value.toEpochMilliseconds()

        override fun ofMillis(ms: Long): kotlin.time.Instant = kotlin.time.Instant.fromEpochMilliseconds(ms)

        override fun toText(value: kotlin.time.Instant): String = value.toString()

        override fun fromText(text: String): kotlin.time.Instant = kotlin.time.Instant.parse(text)
    }

    private object JavaInstant : DateSerializer<java.time.Instant>("dev.mooring.JavaInstantAsDate", "java.time.Instant") {
        override fun millis(value: java.time.Instant): Long = value.toEpochMilli()

        override fun ofMillis(ms: Long): java.time.Instant = java.time.Instant.ofEpochMilli(ms)

        override fun toText(value: java.time.Instant): String = value.toString()

        override fun fromText(text: String): java.time.Instant = java.time.Instant.parse(text)
    }

    private object KotlinUuid : UuidSerializer<Uuid>("dev.mooring.KotlinUuidAsBinary", "kotlin.uuid.Uuid") {
        override fun bits(value: Uuid): Pair<Long, Long> = value.toLongs { msb, lsb -> msb to lsb }

        override fun ofBits(msb: Long, lsb: Long): Uuid = Uuid.fromLongs(msb, lsb)

        override fun toText(value: Uuid): String = value.toString()

        override fun fromText(text: String): Uuid = Uuid.parse(text)
    }

    private object JavaUuid : UuidSerializer<UUID>("dev.mooring.JavaUuidAsBinary", "java.util.UUID") {
        override fun bits(value: UUID): Pair<Long, Long> = value.mostSignificantBits to value.leastSignificantBits

        override fun ofBits(msb: Long, lsb: Long): UUID = UUID(msb, lsb)

        override fun toText(value: UUID): String = value.toString()

        override fun fromText(text: String): UUID = UUID.fromString(text)
    }
}
