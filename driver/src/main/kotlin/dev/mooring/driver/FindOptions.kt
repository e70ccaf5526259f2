package dev.mooring.driver

import dev.mooring.sdam.CursorType
import dev.mooring.sdam.TimeoutMode
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of [MongoCollection.find] (crud.md `FindOptions`); each one left null is not sent.
 * Immutable; safe to share between threads.
 */
public data class FindOptions(
    /** Documents to return per batch (the find command's and each getMore's `batchSize`); 0 lets the server choose the first batch. */
    val batchSize: Int? = null,
    /** At most this many documents; a negative value asks for a single batch of at most `-limit` (`singleBatch: true`). 0: no limit. */
    val limit: Int? = null,
    /** Documents to skip first (non-negative). */
    val skip: Int? = null,
    /** The fields to return. */
    val projection: Bson? = null,
    /** The order of the results. */
    val sort: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** Variables for the filter's `$$var` expressions (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command (and, on 4.4+, to its getMores). */
    val comment: BsonValue? = null,
    /** Server-side time limit of the find command (deprecated by timeoutMS; not combinable with it). */
    val maxTimeMS: Long? = null,
    /** For a [CursorType.TAILABLE_AWAIT] cursor: how long each getMore waits for new data (its `maxTimeMS`). */
    val maxAwaitTimeMS: Long? = null,
    /** Lets the server write temporary files for large sorts. */
    val allowDiskUse: Boolean? = null,
    /** The cursor type (`tailable`, `awaitData`). */
    val cursorType: CursorType = CursorType.NON_TAILABLE,
    /** Keeps an idle cursor open on the server (`noCursorTimeout`). */
    val noCursorTimeout: Boolean? = null,
    /** Inclusive lower index bound (`min`); requires [hint]. */
    val min: Bson? = null,
    /** Exclusive upper index bound (`max`); requires [hint]. */
    val max: Bson? = null,
    /** Returns only the index keys (`returnKey`). */
    val returnKey: Boolean? = null,
    /** Adds `$recordId` to each document (`showRecordId`). */
    val showRecordId: Boolean? = null,
    /** How the collection's timeoutMS applies to the cursor; null: the cursor type's default. */
    val timeoutMode: TimeoutMode? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(batchSize == null || batchSize >= 0) { "batchSize must not be negative, got $batchSize" }
        require(skip == null || skip >= 0) { "skip must not be negative, got $skip" }
        require(maxTimeMS == null || maxTimeMS >= 0) { "maxTimeMS must not be negative, got $maxTimeMS" }
        require(maxAwaitTimeMS == null || maxAwaitTimeMS >= 0) { "maxAwaitTimeMS must not be negative, got $maxAwaitTimeMS" }
    }
}
