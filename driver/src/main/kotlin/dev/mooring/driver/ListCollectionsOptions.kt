package dev.mooring.driver

import dev.mooring.sdam.TimeoutMode
import org.bson.BsonValue

/**
 * The options of [MongoDatabase.listCollections] (enumerate-collections.md); each one left null
 * is not sent. Immutable; safe to share between threads.
 */
public data class ListCollectionsOptions(
    /**
     * Only the names and types (`nameOnly`), which needs fewer locks on the server. The server
     * applies it before the filter: with it a filter on anything but `name` and `type` matches nothing.
     */
    val nameOnly: Boolean? = null,
    /** Only the collections the user is authorized to use (`authorizedCollections`, with [nameOnly]). */
    val authorizedCollections: Boolean? = null,
    /** Collections per batch (`cursor.batchSize` and each getMore's). */
    val batchSize: Int? = null,
    /** A comment attached to the command (not to the getMores, which inherit it: enumerate-collections.md). */
    val comment: BsonValue? = null,
    /** How the database's timeoutMS applies to the cursor (client-side-operations-timeout.md). */
    val timeoutMode: TimeoutMode? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(batchSize == null || batchSize >= 0) { "batchSize must not be negative, got $batchSize" }
    }
}
