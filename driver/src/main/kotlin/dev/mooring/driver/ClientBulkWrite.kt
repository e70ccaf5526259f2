package dev.mooring.driver

import dev.mooring.driver.internal.ClientBulkWriteExecutor
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster

/**
 * Runs [models] — inserts, updates, replaces and deletes on any namespaces — as client bulk write
 * (bulk-write.md `MongoClient.bulkWrite`, the `bulkWrite` command of MongoDB 8.0+ on `admin`).
 *
 * The models are sent in as few `bulkWrite` commands as the server's limits allow: at most
 * `maxWriteBatchSize` writes per command, and the command (its `ops` and the `nsInfo` of the
 * namespaces they use) within `maxBsonObjectSize` and `maxMessageSizeBytes - 1000` bytes (Mooring
 * sends `ops` and `nsInfo` in the command body, not as OP_MSG document sequences, so a command is
 * bounded by the document limit). A command is a retryable write (retryable-writes.md) unless it
 * holds an updateMany or deleteMany model. The results cursor of each command is read to its end
 * (getMore in the same session). [options]' `ordered` (default true) stops at the first failed
 * write; `verboseResults` adds each write's result. Without [session] the bulk write runs in a
 * session of its own (its getMores need the same `lsid`).
 *
 * [timeoutMS] (null: the cluster's; 0: none) bounds the whole bulk write, every command included
 * (client-side-operations-timeout.md).
 *
 * Errors, before anything is sent: [IllegalArgumentException] for an empty [models], an invalid
 * update or replacement document, a write too large for a command, an unacknowledged write
 * concern (`w: 0`) with `ordered` ("Cannot request unacknowledged write concern and ordered
 * writes") or with `verboseResults` ("Cannot request unacknowledged write concern and verbose
 * results"); [IllegalStateException] when the server is older than MongoDB 8.0 (wire version 25).
 * Then [ClientBulkWriteException] for write errors and write concern errors (after every command
 * ran, or at the first write error when ordered), and for a top-level error once results were
 * observed (the error is its cause); a top-level error before that is thrown as it is, its type and
 * error labels intact. Safe to call concurrently.
 */
public suspend fun MongoCluster.bulkWrite(
    models: List<ClientNamespacedWriteModel<*>>,
    options: ClientBulkWriteOptions = ClientBulkWriteOptions(),
    session: ClientSession? = null,
    timeoutMS: Long? = null,
): ClientBulkWriteResult = ClientBulkWriteExecutor(this, timeoutMS).execute(models, options, session)
