package dev.mooring.driver

import dev.mooring.driver.internal.NativeBsonSerializers
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.modules.SerializersModule
import kotlinx.serialization.modules.plus
import org.bson.codecs.kotlinx.defaultSerializersModule

/**
 * The serializers typed collections use by default. Immutable; safe to share between threads.
 *
 * [module] holds bson-kotlinx's `defaultSerializersModule` (ObjectId, the BsonValue types) and
 * contextual serializers that store these types as native BSON rather than strings:
 *
 * | type | stored as |
 * |---|---|
 * | `kotlin.time.Instant`, `java.time.Instant` | BSON date (milliseconds; finer precision is cut) |
 * | `kotlin.uuid.Uuid`, `java.util.UUID` | BSON binary subtype 4 (standard UUID) |
 *
 * They apply to properties marked `@Contextual` (or every property of those types in a file with
 * `@file:UseContextualSerialization(Instant::class, Uuid::class)`), as kotlinx.serialization's
 * contextual lookup works: `@Serializable data class Event(@Contextual val at: Instant)`. Add your
 * own with `MooringSerializers.module + SerializersModule { ... }` and
 * [MongoDatabase.withSerializersModule].
 */
public object MooringSerializers {
    /** The default module: bson-kotlinx's defaults plus the native BSON serializers above. */
    @OptIn(ExperimentalSerializationApi::class)
    public val module: SerializersModule = defaultSerializersModule + NativeBsonSerializers.module
}
