package dev.mooring.sdam.internal.cursor

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import org.bson.BsonDocument

/**
 * The cold flow of one `runCursorCommand`: each collection builds a [CommandCursor] with
 * [newCursor], emits its first batch and the batches of its getMores until the server reports
 * it exhausted (for a tailable cursor an empty batch does not end it), and closes it — also when
 * the collector is cancelled, throws or stops early (`take`, `first`) — so a cursor still open
 * on the server gets its bounded killCursors and its connection and session go back.
 */
internal object CursorFlow {
    fun of(newCursor: () -> CommandCursor): Flow<BsonDocument> = flow {
        val cursor = newCursor()
        try {
            var batch = cursor.open()
            while (true) {
                for (document in batch) emit(document)
                if (cursor.exhausted) break
                batch = cursor.getMore()
            }
        } finally {
            withContext(NonCancellable) { cursor.close() }
        }
    }
}
