@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.samples.service

import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.modules.SerializersModule
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid

/**
 * The JSON of the HTTP API. The `@Contextual` properties of [Bookmark] are resolved here as
 * strings (kotlinx.serialization's own serializers: ISO-8601 for `Instant`, the 36-character
 * form for `Uuid`), while the driver resolves the same properties to BSON date and binary
 * through `MooringSerializers.module`. Defaults are written (an empty `tags`, a null
 * `updatedAt`); unknown keys in a request are refused. Immutable; safe to share.
 */
object ServiceJson {
    /** The configured [Json]. */
    val json: Json = Json {
        serializersModule = SerializersModule {
            contextual(Instant::class, Instant.serializer())
            contextual(Uuid::class, Uuid.serializer())
        }
        encodeDefaults = true
    }
}
