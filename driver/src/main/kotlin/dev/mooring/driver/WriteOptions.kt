package dev.mooring.driver

import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of [MongoCollection.insertOne] (crud.md `InsertOneOptions`). Immutable; safe to share
 * between threads.
 */
public data class InsertOneOptions(
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.insertMany] (crud.md `InsertManyOptions`). Immutable; safe to
 * share between threads.
 */
public data class InsertManyOptions(
    /** Stop at the first error (`ordered`, the default) or go on with the other documents. */
    val ordered: Boolean = true,
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.updateOne], [MongoCollection.updateMany] (crud.md
 * `UpdateOptions`). Immutable; safe to share between threads.
 */
public data class UpdateOptions(
    /** Filters choosing the array elements an update operator changes (`arrayFilters`); not allowed with a pipeline update. */
    val arrayFilters: List<Bson>? = null,
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Inserts a document when none matches (`upsert`). */
    val upsert: Boolean? = null,
    /** Variables for the filter and update (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** For updateOne only: which of the matching documents is updated (`sort`, MongoDB 8.0+). */
    val sort: Bson? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.replaceOne] (crud.md `ReplaceOptions`). Immutable; safe to share
 * between threads.
 */
public data class ReplaceOptions(
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Inserts the replacement when nothing matches (`upsert`). */
    val upsert: Boolean? = null,
    /** Variables for the filter (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** Which of the matching documents is replaced (`sort`, MongoDB 8.0+). */
    val sort: Bson? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.deleteOne], [MongoCollection.deleteMany] (crud.md
 * `DeleteOptions`). Immutable; safe to share between threads.
 */
public data class DeleteOptions(
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Variables for the filter (`let`). */
    val let: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)
