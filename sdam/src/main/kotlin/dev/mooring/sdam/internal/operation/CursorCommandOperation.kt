package dev.mooring.sdam.internal.operation

import dev.mooring.sdam.CursorType
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.internal.cursor.CommandCursor
import dev.mooring.sdam.internal.cursor.CursorFlow
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.sdam.internal.cursor.CursorTimeout
import dev.mooring.sdam.internal.cursor.PageCursor
import dev.mooring.sdam.internal.retry.RetryableRead
import kotlinx.coroutines.flow.Flow
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * A cursor-returning command (run-command.md `runCursorCommand`, and the CRUD helpers' reads) as
 * a cold flow of batches: nothing is sent until collection starts; each collection opens a
 * [CommandCursor] of its own. The timeoutMode checks of client-side-operations-timeout.md
 * "Cursors" run here, when the flow is made.
 */
internal object CursorCommandOperation {
    /**
     * With [retryableRead] the initial command is a retryable read, else it is retried as
     * runCommand is (a pool-cleared error; server overload when retryReads and retryWrites are
     * both on). A positive [limit] caps the documents returned (see [CursorPage.pages]). With
     * [generic] (the public runCursorCommand, which run-command.md builds upon runCommand) a
     * causally consistent session adds no `afterClusterTime` (causal-consistency.md: "commands
     * that are run using runCommand MUST NOT have an afterClusterTime field added"); the driver's
     * cursor helpers (find, aggregate, the listings) do add it.
     */
    fun pages(ctx: OperationContext, database: String, command: Bson, options: RunCursorCommandOptions, retryableRead: Boolean, limit: Int?, generic: Boolean = false): Flow<CursorPage> {
        val doc = ctx.checkCommand(database, command)
        options.session?.checkUsable(ctx.topology.id)
        val timeoutMS = ctx.cursorTimeoutMS(options.timeoutMS, options.session)
        val mode = timeoutMode(doc, options, timeoutMS)
        return CursorFlow.pages { cursor(ctx, database, doc, options, retryableRead, limit, timeoutMS, mode, null, generic) }
    }

    /**
     * One cursor of [command], not opened yet, iterated by its caller ([PageCursor]): the checks of
     * [pages]; the initial command runs under [initialTimeoutMS] when not null (else the cursor's timeoutMS).
     */
    fun pageCursor(ctx: OperationContext, database: String, command: Bson, options: RunCursorCommandOptions, retryableRead: Boolean, initialTimeoutMS: Long?): PageCursor {
        val doc = ctx.checkCommand(database, command)
        options.session?.checkUsable(ctx.topology.id)
        val timeoutMS = ctx.cursorTimeoutMS(options.timeoutMS, options.session)
        val mode = timeoutMode(doc, options, timeoutMS)
        return PageCursor(cursor(ctx, database, doc, options, retryableRead, null, timeoutMS, mode, initialTimeoutMS))
    }

    private fun cursor(
        ctx: OperationContext, database: String, doc: BsonDocument, options: RunCursorCommandOptions, retryableRead: Boolean,
        limit: Int?, timeoutMS: Long?, mode: TimeoutMode, initialTimeoutMS: Long?, generic: Boolean = false,
    ): CommandCursor {
        val retry = if (retryableRead) RetryableRead(ctx.settings.retryReads) else ctx.runCommandRetry
        val timeout = CursorTimeout(timeoutMS, mode, options.cursorType, ctx.settings.serverSelectionTimeoutMS, initialTimeoutMS)
        return CommandCursor(ctx.cursors, database, doc, options, retry, ctx.operationSession(options.session, generic), timeout, limit)
    }

    /**
     * The timeoutMode of a cursor with the effective [timeoutMS], after the checks of
     * client-side-operations-timeout.md "Cursors" ([IllegalArgumentException]): timeoutMode
     * set without timeoutMS; ITERATION for an aggregate with `$out` or `$merge`; a getMore
     * maxTimeMS with a positive timeoutMS, except a tailable-await cursor's below it.
     */
    private fun timeoutMode(command: BsonDocument, options: RunCursorCommandOptions, timeoutMS: Long?): TimeoutMode {
        require(options.timeoutMode == null || timeoutMS != null) {
            "timeoutMode ${options.timeoutMode} needs timeoutMS (set it on the call or the cluster)"
        }
        val limit = timeoutMS?.takeIf { it > 0 }
        val await = options.cursorType == CursorType.TAILABLE_AWAIT
        val maxTimeMS = options.maxTimeMS
        require(limit == null || maxTimeMS == null || (await && maxTimeMS < limit)) {
            "getMore maxTimeMS=$maxTimeMS with timeoutMS=$limit is not supported" +
                if (await) " (a tailable-await cursor's maxTimeMS must be below timeoutMS)" else ""
        }
        val mode = options.timeoutMode ?: if (options.cursorType == CursorType.NON_TAILABLE) TimeoutMode.CURSOR_LIFETIME else TimeoutMode.ITERATION
        require(options.timeoutMode != TimeoutMode.ITERATION || !writesOutput(command)) {
            "timeoutMode ITERATION is not allowed for an aggregate with \$out or \$merge (client-side-operations-timeout.md)"
        }
        return mode
    }

    /** True for an `aggregate` whose pipeline has a `$out` or `$merge` stage. */
    private fun writesOutput(command: BsonDocument): Boolean =
        command.firstKey == "aggregate" && (command["pipeline"] as? BsonArray).orEmpty().any { stage ->
            (stage as? BsonDocument)?.keys?.any { it == "\$out" || it == "\$merge" } == true
        }
}
