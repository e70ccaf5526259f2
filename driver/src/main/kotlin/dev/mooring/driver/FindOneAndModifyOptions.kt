package dev.mooring.driver

import org.bson.BsonValue
import org.bson.conversions.Bson

/** Which version of the document a findOneAndUpdate / findOneAndReplace returns (`new`). Immutable enum. */
public enum class ReturnDocument {
    /** The document as it was before the change (`new: false`, the default). */
    BEFORE,

    /** The document after the change (`new: true`). */
    AFTER,
}

/**
 * The options of [MongoCollection.findOneAndUpdate] (crud.md `FindOneAndUpdateOptions`).
 * Immutable; safe to share between threads.
 */
public data class FindOneAndUpdateOptions(
    /** Filters choosing the array elements an update operator changes (`arrayFilters`). */
    val arrayFilters: List<Bson>? = null,
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** The fields of the returned document (`fields`). */
    val projection: Bson? = null,
    /** Which version is returned (`new`). */
    val returnDocument: ReturnDocument = ReturnDocument.BEFORE,
    /** Which of the matching documents is updated (`sort`). */
    val sort: Bson? = null,
    /** Inserts a document when none matches (`upsert`). */
    val upsert: Boolean? = null,
    /** Variables for the filter and update (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.findOneAndReplace] (crud.md `FindOneAndReplaceOptions`).
 * Immutable; safe to share between threads.
 */
public data class FindOneAndReplaceOptions(
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** The fields of the returned document (`fields`). */
    val projection: Bson? = null,
    /** Which version is returned (`new`). */
    val returnDocument: ReturnDocument = ReturnDocument.BEFORE,
    /** Which of the matching documents is replaced (`sort`). */
    val sort: Bson? = null,
    /** Inserts the replacement when nothing matches (`upsert`). */
    val upsert: Boolean? = null,
    /** Variables for the filter (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.findOneAndDelete] (crud.md `FindOneAndDeleteOptions`).
 * Immutable; safe to share between threads.
 */
public data class FindOneAndDeleteOptions(
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** The fields of the returned document (`fields`). */
    val projection: Bson? = null,
    /** Which of the matching documents is deleted (`sort`). */
    val sort: Bson? = null,
    /** Variables for the filter (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)
