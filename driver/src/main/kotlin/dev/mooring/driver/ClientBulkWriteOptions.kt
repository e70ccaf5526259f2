package dev.mooring.driver

import dev.mooring.sdam.WriteConcern
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of a client bulk write ([bulkWrite] on a cluster; bulk-write.md `BulkWriteOptions`).
 * Fields left null are not sent. Immutable; safe to share between threads.
 */
public data class ClientBulkWriteOptions(
    /** Stop at the first failed write (`ordered`, the default, always sent) or go on with the others. */
    val ordered: Boolean = true,
    /** Skips document validation (`bypassDocumentValidation`). */
    val bypassDocumentValidation: Boolean? = null,
    /** Variables for every write's filter and update (`let`). */
    val let: Bson? = null,
    /** The write concern of this bulk write; null: the cluster's. */
    val writeConcern: WriteConcern? = null,
    /** A comment attached to every command. */
    val comment: BsonValue? = null,
    /**
     * True: the result holds each successful write's own result ([ClientBulkWriteResult.Acknowledged.verboseResults]);
     * sent as `errorsOnly: false`. Null or false: summary counts only (`errorsOnly: true`).
     */
    val verboseResults: Boolean? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
)
