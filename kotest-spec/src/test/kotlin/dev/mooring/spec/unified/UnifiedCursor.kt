package dev.mooring.spec.unified

import dev.mooring.sdam.CursorCloseCancellation
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.launch
import org.bson.BsonDocument

/**
 * A cursor entity of the unified format over [MongoCluster.runCursorCommand][dev.mooring.sdam.MongoCluster.runCursorCommand]'s
 * pages, iterated on demand: the cursor's coroutine (in [scope]) runs the command when the
 * cursor is created and sends a getMore only when [next] or [tryNext] needs one, so the commands
 * happen exactly where the test's operations put them. [close] cancels the coroutine (a cursor
 * still open on the server is killed, under the close's own timeoutMS when given) and waits for it. Used from the test's coroutine only.
 */
class UnifiedCursor(scope: CoroutineScope, pages: Flow<CursorPage>) {
    private val results = Channel<Result<CursorPage>>()
    private val demand = Channel<Unit>(Channel.CONFLATED)
    private val buffer = ArrayDeque<BsonDocument>()
    private var exhausted = false
    @Volatile private var failed = false
    private val job = scope.launch {
        try {
            pages.collect { page ->
                // a failed getMore keeps the cursor (and a pinned connection) until close, as load-balancers.md wants
                results.send(page.error?.let { Result.failure(it) } ?: Result.success(page))
                if (!page.exhausted) demand.receive()
            }
        } catch (e: kotlinx.coroutines.CancellationException) {
            throw e
        } catch (e: Throwable) {
            if (!failed) results.send(Result.failure(e))
        }
    }

    /** Waits for the first batch (the initial command's outcome); throws its error. */
    suspend fun opened(): UnifiedCursor {
        receive()
        return this
    }

    /** The next document, fetching batches as needed (an empty batch of a tailable cursor is skipped); null when exhausted. */
    suspend fun next(): BsonDocument? {
        while (buffer.isEmpty()) {
            if (exhausted) return null
            demand.send(Unit)
            receive()
        }
        return buffer.removeFirst()
    }

    /** At most one getMore: the next document, or null when the batch it fetched was empty. */
    suspend fun tryNext(): BsonDocument? {
        if (buffer.isEmpty() && !exhausted) {
            demand.send(Unit)
            receive()
        }
        return buffer.removeFirstOrNull()
    }

    /**
     * Closes the cursor (killCursors when still open on the server, under [timeoutMS] when given,
     * through [CursorCloseCancellation]) and waits until it has ended.
     */
    suspend fun close(timeoutMS: Long? = null) {
        if (timeoutMS != null) job.cancel(CursorCloseCancellation(timeoutMS)) else job.cancel()
        job.join()
        exhausted = true
        buffer.clear()
    }

    private suspend fun receive() {
        val result = results.receive()
        if (result.isFailure) {
            failed = true
            exhausted = true
        }
        val page = result.getOrThrow()
        buffer.addAll(page.documents)
        if (page.exhausted) exhausted = true
    }
}
