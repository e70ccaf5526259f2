package dev.mooring.driver

import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of [MongoCollection.countDocuments] (crud.md `CountOptions`); each one left null is
 * not sent. Immutable; safe to share between threads.
 */
public data class CountOptions(
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** At most this many documents are counted (the pipeline's `$limit`; positive). */
    val limit: Long? = null,
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** Documents skipped before counting (the pipeline's `$skip`). */
    val skip: Long? = null,
    /** A comment attached to the aggregate command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.estimatedDocumentCount] (crud.md `EstimatedDocumentCountOptions`).
 * Immutable; safe to share between threads.
 */
public data class EstimatedDocumentCountOptions(
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** A comment attached to the `count` command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)

/**
 * The options of [MongoCollection.distinct] (crud.md `DistinctOptions`). Immutable; safe to share
 * between threads.
 */
public data class DistinctOptions(
    /** The collation. */
    val collation: Bson? = null,
    /** The index to use (MongoDB 7.1+). */
    val hint: Hint? = null,
    /** Server-side time limit (deprecated by timeoutMS). */
    val maxTimeMS: Long? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)
