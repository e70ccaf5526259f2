package dev.mooring.driver

import dev.mooring.sdam.TimeoutMode
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of [MongoCollection.aggregate] (crud.md `AggregateOptions`); each one left null is
 * not sent. Immutable; safe to share between threads.
 */
public data class AggregateOptions(
    /** Lets the server write temporary files (`allowDiskUse`). */
    val allowDiskUse: Boolean? = null,
    /** Documents per batch (`cursor.batchSize` and each getMore's); not sent for a pipeline ending in `$out`/`$merge` when 0. */
    val batchSize: Int? = null,
    /** Skips document validation for `$out`/`$merge` (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** The collation. */
    val collation: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** The index to use. */
    val hint: Hint? = null,
    /** Variables for the pipeline (`let`). */
    val let: Bson? = null,
    /** Server-side time limit (deprecated by timeoutMS; not combinable with it). */
    val maxTimeMS: Long? = null,
    /** How the collection's timeoutMS applies to the cursor; ITERATION is refused for `$out`/`$merge`. */
    val timeoutMode: TimeoutMode? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(batchSize == null || batchSize >= 0) { "batchSize must not be negative, got $batchSize" }
        require(maxTimeMS == null || maxTimeMS >= 0) { "maxTimeMS must not be negative, got $maxTimeMS" }
    }
}
