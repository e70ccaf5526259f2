package dev.mooring.sdam.internal.cursor

import dev.mooring.sdam.CursorCloseCancellation
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.transform
import kotlinx.coroutines.withContext
import org.bson.BsonDocument

/**
 * The cold flows of one `runCursorCommand`: each collection builds a [CommandCursor] with
 * newCursor, emits its first batch and the batches of its getMores until the server reports it
 * exhausted (for a tailable cursor an empty batch does not end it), and closes it — also when
 * the collector is cancelled, throws or stops early (`take`, `first`) — so a cursor still open
 * on the server gets its bounded killCursors and its connection and session go back. The next
 * getMore is sent only when the collector returns from the previous page's `emit` (and, for a
 * collector running under [GetMoreDemand], once that says so). A getMore
 * that fails is emitted as a page carrying the error before the flow ends with it, so a page
 * collector can keep the cursor (and its pinned connection) until it stops collecting. A collector
 * cancelled with [CursorCloseCancellation] closes the cursor under that timeoutMS.
 */
internal object CursorFlow {
    /** One [CursorPage] per batch. */
    fun pages(newCursor: () -> CommandCursor): Flow<CursorPage> = flow {
        val cursor = newCursor()
        var closeTimeoutMS: Long? = null
        try {
            var batch = cursor.open()
            while (true) {
                emit(CursorPage(batch, cursor.exhausted))
                if (cursor.exhausted) break
                batch = try {
                    cursor.getMore()
                } catch (e: Throwable) {
                    if (e is kotlinx.coroutines.CancellationException) throw e
                    emit(CursorPage(emptyList(), exhausted = false, error = e))
                    throw e
                }
            }
        } catch (e: CursorCloseCancellation) {
            closeTimeoutMS = e.timeoutMS
            throw e
        } finally {
            withContext(NonCancellable) { cursor.close(closeTimeoutMS) }
        }
    }

    /** The documents of [pages], one by one. */
    fun documents(pages: Flow<CursorPage>): Flow<BsonDocument> = pages.transform { page ->
        page.error?.let { throw it }
        page.documents.forEach { emit(it) }
    }
}
