package dev.mooring.driver.internal

import dev.mooring.driver.ChangeStream
import dev.mooring.driver.ChangeStreamCursor
import dev.mooring.driver.ChangeStreamDocument
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.flow.FlowCollector
import kotlinx.coroutines.flow.flow
import org.bson.BsonDocument
import org.bson.BsonTimestamp

/**
 * [ChangeStream] over [command]: the state the Resume Process needs (change-streams.md), kept
 * from one cursor of the stream to the next — the cached [resumeToken], the saved operation time,
 * whether a document was returned and whether the stream was opened once. One collector at a time
 * ([collecting]); [resumeToken] is volatile for readers on other threads, the rest is touched by
 * the one collector only.
 */
internal class DefaultChangeStream<T : Any>(
    val command: ChangeStreamCommand,
    val events: ChangeStreamEvents<T>,
) : ChangeStream<T> {
    private val collecting = AtomicBoolean(false)

    // change-streams.md "Updating the Cached Resume Token": startAfter, else resumeAfter, when started
    @Volatile
    override var resumeToken: BsonDocument? = command.options.startAfter ?: command.options.resumeAfter

    /** The operation time to resume at when no token is cached: the option's, or saved from the first aggregate. */
    var operationTime: BsonTimestamp? = command.options.startAtOperationTime

    /** True once a document was returned (a `startAfter` stream then resumes with `resumeAfter`). */
    var returnedDocument: Boolean = false

    /** True once an aggregate of the stream succeeded: later ones follow the Resume Process. */
    var opened: Boolean = false

    /** Where the next aggregate starts (change-streams.md "Resume Process"). */
    fun start(): ChangeStreamCommand.Start {
        if (!opened) return ChangeStreamCommand.Start.Original
        resumeToken?.let { return ChangeStreamCommand.Start.AfterToken(it, startAfter = command.options.startAfter != null && !returnedDocument) }
        operationTime?.let { return ChangeStreamCommand.Start.AtOperationTime(it) }
        return ChangeStreamCommand.Start.Now
    }

    override suspend fun collect(collector: FlowCollector<ChangeStreamDocument<T>>) {
        flow {
            val cursor = cursor()
            try {
                while (true) {
                    val event = cursor.next() ?: break
                    emit(event)
                }
            } finally {
                cursor.close()
            }
        }.collect(collector)
    }

    override suspend fun cursor(): ChangeStreamCursor<T> {
        check(collecting.compareAndSet(false, true)) { "this change stream is being collected already: one collector at a time (watch again for another)" }
        val cursor = DefaultChangeStreamCursor(this)
        try {
            cursor.open(initialTimeoutMS = null)
        } catch (e: Throwable) {
            cursor.close()
            throw e
        }
        return cursor
    }

    /** Called by a cursor when it closes: the stream may be collected again. */
    fun released() {
        collecting.set(false)
    }
}
