package dev.mooring.sdam.internal.cursor

import dev.mooring.events.InternalMooringApi
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.implementation
import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * Not API ([InternalMooringApi], for the Java facade and the spec runners): one batch of a cursor, and whether the cursor
 * is [exhausted] after it (no getMore follows). Immutable.
 */
@InternalMooringApi
public class CursorPage internal constructor(
    /** The batch's documents (possibly none for a tailable cursor). */
    public val documents: List<BsonDocument>,
    /** True when the server reported the cursor exhausted with this batch. */
    public val exhausted: Boolean,
    /**
     * The error of a getMore, or null. The cursor stays as it is (a pinned connection stays
     * pinned, load-balancers.md) until the collector stops collecting; the flow then ends with
     * this error when the collector returns from `emit`.
     */
    public val error: Throwable? = null,
) {
    public companion object {
        /**
         * [MongoCluster.runCursorCommand] as a flow of batches: the next getMore is sent only when
         * the collector returns from `emit` of the previous page. With [retryableRead] the initial
         * command is a retryable read (retryable-reads.md; for driver CRUD helpers such as the
         * spec runners'), else it is retried as runCommand is. A positive [limit] is the find
         * helper's `limit` (crud.md): each getMore asks for at most the documents still to return
         * (`batchSize` = min(the options' batchSize, limit - returned)), and once [limit] documents
         * were returned the cursor ends (killCursors when still open on the server). Same contracts otherwise.
         */
        @JvmStatic
        @JvmOverloads
        public fun pages(
            cluster: MongoCluster,
            database: String,
            command: Bson,
            options: RunCursorCommandOptions,
            retryableRead: Boolean = false,
            limit: Int? = null,
        ): Flow<CursorPage> = cluster.implementation().runCursorPages(database, command, options, retryableRead, limit?.takeIf { it > 0 })
    }
}
