package dev.mooring.driver

import org.bson.BsonValue

/**
 * The outcome of a client bulk write ([bulkWrite] on a cluster; bulk-write.md `BulkWriteResult`):
 * [Acknowledged] counts, or [Unacknowledged] for a write concern `w: 0` (nothing is known then).
 * Immutable.
 */
public sealed interface ClientBulkWriteResult {
    /** The server acknowledged the writes: the counts summed over every `bulkWrite` command sent. */
    public data class Acknowledged(
        /** Documents inserted. */
        val insertedCount: Long,
        /** Documents upserted by updates and replaces. */
        val upsertedCount: Long,
        /** Documents matched by updates and replaces (upserts not included). */
        val matchedCount: Long,
        /** Documents modified by updates and replaces. */
        val modifiedCount: Long,
        /** Documents deleted. */
        val deletedCount: Long,
        /** Each successful write's result, when [ClientBulkWriteOptions.verboseResults] was true; else null. */
        val verboseResults: ClientVerboseResults?,
    ) : ClientBulkWriteResult

    /** Sent with `w: 0`: the server's outcome is unknown. */
    public data object Unacknowledged : ClientBulkWriteResult
}

/**
 * The results of the successful writes of a client bulk write, each keyed by the index of its model
 * in the request (bulk-write.md `VerboseResults`). Immutable.
 */
public data class ClientVerboseResults(
    /** The inserts that succeeded. */
    val insertResults: Map<Int, ClientInsertOneResult>,
    /** The updates and replaces that succeeded. */
    val updateResults: Map<Int, ClientUpdateResult>,
    /** The deletes that succeeded. */
    val deleteResults: Map<Int, ClientDeleteResult>,
)

/** One insert of a client bulk write: the inserted document's `_id` (the driver's when it had none). Immutable. */
public data class ClientInsertOneResult(val insertedId: BsonValue)

/**
 * One update or replace of a client bulk write. [upsertedId] is null when nothing was upserted
 * (an upserted `_id` of BSON null is [org.bson.BsonNull]). Immutable.
 */
public data class ClientUpdateResult(
    /** Documents that matched the filter (the server's `n`: 1 for an upsert). */
    val matchedCount: Long,
    /** Documents actually changed. */
    val modifiedCount: Long,
    /** The `_id` of the upserted document, or null when no upsert took place. */
    val upsertedId: BsonValue?,
)

/** One delete of a client bulk write. Immutable. */
public data class ClientDeleteResult(val deletedCount: Long)
