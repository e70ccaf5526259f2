package dev.mooring.driver

import dev.mooring.driver.internal.NativeBsonSerializers
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.modules.SerializersModule
import kotlinx.serialization.modules.plus
import org.bson.codecs.kotlinx.defaultSerializersModule

/**
 * The serializers typed collections use by default. Immutable; safe to share between threads.
 *
 * Typed collections store these types as native BSON rather than strings:
 *
 * | type | stored as |
 * |---|---|
 * | `kotlin.time.Instant`, `java.time.Instant` | BSON date (milliseconds, see below) |
 * | `kotlin.uuid.Uuid`, `java.util.UUID` | BSON binary subtype 4 (standard UUID) |
 *
 * - `kotlin.time.Instant` and `kotlin.uuid.Uuid` need no annotation: the collection's codec puts
 *   the native serializers in place of kotlinx.serialization's built-in string serializers of these
 *   types wherever a document reaches them (properties, nullable or not; list elements; map values,
 *   map keys staying strings; nested and sealed classes; value classes):
 *   `@Serializable data class Event(val id: Uuid, val at: Instant)`. A serializer of your own for
 *   these types (`@Serializable(with = ...)`, or a contextual one of yours) is used as it is.
 * - `java.time.Instant` and `java.util.UUID` have no kotlinx.serialization serializer at all, so their
 *   properties are marked `@Contextual` (or listed in `@file:UseContextualSerialization(...)`); the
 *   contextual serializers of [module] then store them natively. `@Contextual` works the same for the
 *   two Kotlin types.
 *
 * Precision: a BSON date holds milliseconds. Encoding cuts any sub-millisecond part of an instant
 * (giving the millisecond at or before it); decoding gives whole milliseconds, so an instant with
 * finer precision does not read back equal. Decoding accepts only the native BSON types: a string
 * where a date or UUID is expected (as older code storing text wrote) is never parsed, it fails with
 * a [DocumentDecodingException] naming the field.
 *
 * [module] holds bson-kotlinx's `defaultSerializersModule` (ObjectId, the BsonValue types) and the
 * contextual serializers above. Add your own with `MooringSerializers.module + SerializersModule { ... }`
 * and [MongoDatabase.withSerializersModule].
 */
public object MooringSerializers {
    /** The default module: bson-kotlinx's defaults plus the contextual native BSON serializers above. */
    @OptIn(ExperimentalSerializationApi::class)
    public val module: SerializersModule = defaultSerializersModule + NativeBsonSerializers.module
}
