package dev.mooring.sdam.internal.cursor

import dev.mooring.events.InternalMooringApi
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.implementation
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.BsonTimestamp
import org.bson.conversions.Bson

/**
 * Not API ([InternalMooringApi], for the driver's change streams): one server-side cursor that its
 * caller iterates batch by batch — [open] runs the cursor-opening command (a retryable read when
 * asked), [getMore] fetches the next batch (possibly empty for a tailable cursor), [close] kills a
 * cursor still open on the server (errors ignored) and returns its connection and implicit session.
 * The same contracts as [CursorPage.pages] otherwise, but a getMore error is thrown to the caller,
 * which then closes the cursor.
 *
 * Not thread-safe: one coroutine iterates a cursor.
 */
@InternalMooringApi
public class PageCursor internal constructor(private val cursor: CommandCursor) {
    /** True when no getMore follows (the server reported the cursor exhausted, or it was closed). */
    public val exhausted: Boolean get() = cursor.exhausted

    /** The `postBatchResumeToken` of the latest batch, or null. */
    public val postBatchResumeToken: BsonDocument? get() = cursor.postBatchResumeToken

    /** The `operationTime` of the opening command's reply, or null. */
    public val operationTime: BsonTimestamp? get() = cursor.operationTime

    /** The maxWireVersion of the connection of the latest command sent (opening or getMore), 0 before any. */
    public val wireVersion: Int get() = cursor.wireVersion

    /** What is left of the current `next`'s timeoutMS (ITERATION mode: since the latest getMore that followed a document), or null. */
    public fun iterationRemainingMS(): Long? = cursor.iterationRemainingMS()

    /** Runs the opening command; returns its first batch. */
    public suspend fun open(): List<BsonDocument> = cursor.open()

    /** The next batch (see the class documentation). */
    public suspend fun getMore(): List<BsonDocument> = cursor.getMore()

    /** Ends the cursor (idempotent, not cancellable). */
    public suspend fun close(): Unit = withContext(NonCancellable) { cursor.close() }

    public companion object {
        /**
         * A cursor of [command] on [database], not opened yet; the checks of [CursorPage.pages] run
         * here. With [initialTimeoutMS] the opening command runs under it instead of the options' timeoutMS.
         */
        @JvmStatic
        public fun of(
            cluster: MongoCluster,
            database: String,
            command: Bson,
            options: RunCursorCommandOptions,
            retryableRead: Boolean,
            initialTimeoutMS: Long? = null,
        ): PageCursor = cluster.implementation().pageCursor(database, command, options, retryableRead, initialTimeoutMS)
    }
}
