@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.samples.service

import kotlinx.serialization.Contextual
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid

/**
 * A bookmark, as stored in the `bookmarks` collection and as returned by the HTTP API: one
 * `@Serializable` class for both. In MongoDB (through `MooringSerializers.module`) [id] is the
 * `_id`, a BSON binary subtype 4, and [createdAt]/[updatedAt] are BSON dates; in JSON (through
 * [ServiceJson]) they are a UUID string and ISO-8601 strings; the id keeps its name `_id` in JSON
 * too (one serial name for both formats). [url] is unique (an index). Immutable.
 */
@Serializable
data class Bookmark(
    @SerialName("_id") @Contextual val id: Uuid,
    val url: String,
    val title: String,
    val tags: List<String> = emptyList(),
    @Contextual val createdAt: Instant,
    @Contextual val updatedAt: Instant? = null,
)

/** The body of `POST /bookmarks`. Immutable. */
@Serializable
data class NewBookmark(
    val url: String,
    val title: String,
    val tags: List<String> = emptyList(),
)

/** The body of `PATCH /bookmarks/{id}`: the fields to change (null: unchanged; at least one). Immutable. */
@Serializable
data class BookmarkChanges(
    val url: String? = null,
    val title: String? = null,
    val tags: List<String>? = null,
) {
    /** True when no field is given. */
    val isEmpty: Boolean get() = url == null && title == null && tags == null
}

/** The reply of `GET /bookmarks`: the matching count and one page of them, newest first. Immutable. */
@Serializable
data class BookmarkPage(
    val total: Long,
    val items: List<Bookmark>,
)
