package dev.mooring.driver

import org.bson.conversions.Bson

/**
 * One write of a [MongoCollection.bulkWrite] (crud.md `WriteModel`). Immutable when the documents
 * it holds are; a model may be shared between threads then.
 */
public sealed interface WriteModel<out T : Any> {
    /** Inserts [document]; an `_id` is generated when it has none. */
    public data class InsertOne<out T : Any>(val document: T) : WriteModel<T>

    /** Updates the first document matching [filter]. */
    public data class UpdateOne(
        val filter: Bson,
        val update: Update,
        val arrayFilters: List<Bson>? = null,
        val collation: Bson? = null,
        val hint: Hint? = null,
        val upsert: Boolean? = null,
        val sort: Bson? = null,
    ) : WriteModel<Nothing>

    /** Updates every document matching [filter] (makes its batch a non-retryable write). */
    public data class UpdateMany(
        val filter: Bson,
        val update: Update,
        val arrayFilters: List<Bson>? = null,
        val collation: Bson? = null,
        val hint: Hint? = null,
        val upsert: Boolean? = null,
    ) : WriteModel<Nothing>

    /** Replaces the first document matching [filter] with [replacement]. */
    public data class ReplaceOne<out T : Any>(
        val filter: Bson,
        val replacement: T,
        val collation: Bson? = null,
        val hint: Hint? = null,
        val upsert: Boolean? = null,
        val sort: Bson? = null,
    ) : WriteModel<T>

    /** Deletes the first document matching [filter]. */
    public data class DeleteOne(val filter: Bson, val collation: Bson? = null, val hint: Hint? = null) : WriteModel<Nothing>

    /** Deletes every document matching [filter] (makes its batch a non-retryable write). */
    public data class DeleteMany(val filter: Bson, val collation: Bson? = null, val hint: Hint? = null) : WriteModel<Nothing>
}

/**
 * The options of [MongoCollection.bulkWrite] (crud.md `BulkWriteOptions`). Immutable; safe to
 * share between threads.
 */
public data class BulkWriteOptions(
    /** Stop at the first error (`ordered`, the default) or go on with the other writes. */
    val ordered: Boolean = true,
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** Variables for the filters and updates (`let`). */
    val let: Bson? = null,
    /** A comment attached to every command. */
    val comment: org.bson.BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)
