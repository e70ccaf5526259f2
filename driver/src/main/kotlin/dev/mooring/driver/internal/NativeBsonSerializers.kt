package dev.mooring.driver.internal

import java.nio.ByteBuffer
import java.util.UUID
import kotlin.time.ExperimentalTime
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
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
 * Contextual serializers storing instants as BSON dates and UUIDs as binary subtype 4 (see
 * `MooringSerializers`). With a non-BSON format they fall back to ISO-8601 / canonical UUID strings.
 * Stateless; thread-safe.
 */
@OptIn(ExperimentalTime::class, ExperimentalUuidApi::class, ExperimentalSerializationApi::class)
internal object NativeBsonSerializers {
    val module: SerializersModule = SerializersModule {
        contextual(kotlin.time.Instant::class, KotlinInstant)
        contextual(java.time.Instant::class, JavaInstant)
        contextual(Uuid::class, KotlinUuid)
        contextual(UUID::class, JavaUuid)
    }

    /** A serializer over a native BSON value, with a string form for other formats. */
    private abstract class Native<T : Any>(name: String) : KSerializer<T> {
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
            return fromBson(v) ?: if (v.isString) fromText(v.asString().value)
            else throw SerializationException("expected ${descriptor.serialName} as BSON ${expected()}, found ${v.bsonType}")
        }

        abstract fun expected(): String
    }

    private abstract class DateSerializer<T : Any>(name: String) : Native<T>(name) {
        abstract fun millis(value: T): Long

        abstract fun ofMillis(ms: Long): T

        override fun toBson(value: T): BsonValue = BsonDateTime(millis(value))

        override fun fromBson(value: BsonValue): T? = if (value.isDateTime) ofMillis(value.asDateTime().value) else null

        override fun expected(): String = "date"
    }

    private abstract class UuidSerializer<T : Any>(name: String) : Native<T>(name) {
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

    private object KotlinInstant : DateSerializer<kotlin.time.Instant>("dev.mooring.KotlinInstantAsDate") {
        override fun millis(value: kotlin.time.Instant): Long = value.toEpochMilliseconds()

        override fun ofMillis(ms: Long): kotlin.time.Instant = kotlin.time.Instant.fromEpochMilliseconds(ms)

        override fun toText(value: kotlin.time.Instant): String = value.toString()

        override fun fromText(text: String): kotlin.time.Instant = kotlin.time.Instant.parse(text)
    }

    private object JavaInstant : DateSerializer<java.time.Instant>("dev.mooring.JavaInstantAsDate") {
        override fun millis(value: java.time.Instant): Long = value.toEpochMilli()

        override fun ofMillis(ms: Long): java.time.Instant = java.time.Instant.ofEpochMilli(ms)

        override fun toText(value: java.time.Instant): String = value.toString()

        override fun fromText(text: String): java.time.Instant = java.time.Instant.parse(text)
    }

    private object KotlinUuid : UuidSerializer<Uuid>("dev.mooring.KotlinUuidAsBinary") {
        override fun bits(value: Uuid): Pair<Long, Long> = value.toLongs { msb, lsb -> msb to lsb }

        override fun ofBits(msb: Long, lsb: Long): Uuid = Uuid.fromLongs(msb, lsb)

        override fun toText(value: Uuid): String = value.toString()

        override fun fromText(text: String): Uuid = Uuid.parse(text)
    }

    private object JavaUuid : UuidSerializer<UUID>("dev.mooring.JavaUuidAsBinary") {
        override fun bits(value: UUID): Pair<Long, Long> = value.mostSignificantBits to value.leastSignificantBits

        override fun ofBits(msb: Long, lsb: Long): UUID = UUID(msb, lsb)

        override fun toText(value: UUID): String = value.toString()

        override fun fromText(text: String): UUID = UUID.fromString(text)
    }
}
