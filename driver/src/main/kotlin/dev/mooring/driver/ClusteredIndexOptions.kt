package dev.mooring.driver

import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.conversions.Bson

/**
 * The `clusteredIndex` option of [CreateCollectionOptions] (MongoDB 5.3+): documents stored in
 * the order of their [key]. The server accepts only the key `{_id: 1}` with `unique: true` (the
 * defaults here) and rejects others. Immutable; safe to share between threads.
 */
public data class ClusteredIndexOptions(
    /** The clustered index key (`key`). */
    val key: Bson = BsonDocument("_id", BsonInt32(1)),
    /** Must be true (`unique`). */
    val unique: Boolean = true,
    /** The index's name; null lets the server name it. */
    val name: String? = null,
)
