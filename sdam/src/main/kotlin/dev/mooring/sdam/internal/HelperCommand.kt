package dev.mooring.sdam.internal

import dev.mooring.events.InternalMooringApi
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * Not API ([InternalMooringApi], for the driver module): [MongoCluster.runCommand] for the
 * commands of the driver's own helpers (a collection's drop, a non-retryable bulk write batch,
 * the admin writes). The generic runCommand adds no `afterClusterTime` in a causally consistent
 * session (causal-consistency.md: "commands that are run using runCommand MUST NOT have an
 * afterClusterTime field added"); a helper's read or write does, as the other helpers' paths
 * (retryable reads and writes, cursors) do. Its operation span (open-telemetry.md "Operation Span
 * Name") is the helper's: `operationName` (null: the command's name, which is the helper's
 * operation name for most, e.g. `createIndexes`, `delete`, `bulkWrite`) on the command's
 * database and collection, not the generic `runCommand db`. Errors and retries as [MongoCluster.runCommand].
 */
@InternalMooringApi
public object HelperCommand {
    public suspend fun run(
        cluster: MongoCluster,
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long? = null,
        operationName: String? = null,
    ): BsonDocument = (cluster as? DefaultMongoCluster)?.runHelperCommand(database, command, readPreference, session, timeoutMS, operationName)
        ?: cluster.runCommand(database, command, readPreference, session, timeoutMS)
}
