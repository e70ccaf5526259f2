package dev.mooring.driver.internal

import dev.mooring.driver.ChangeStreamCursor
import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.MongoChangeStreamException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.internal.cursor.PageCursor
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument

/**
 * One iteration of a [DefaultChangeStream]: its server cursor ([PageCursor], replaced on each
 * resume), the current batch and its `postBatchResumeToken`. A getMore that fails with a resumable
 * error ([ResumableChangeStreamError]) is followed by one resume (close the cursor, select a
 * server, aggregate from the stream's [DefaultChangeStream.start]); the resume's own errors surface.
 * A CSOT timeout surfaces and leaves a resume for the next call; the resume that follows a failed
 * getMore runs under what is left of that `next`'s timeoutMS. Not thread-safe (one coroutine).
 */
internal class DefaultChangeStreamCursor<T : Any>(private val stream: DefaultChangeStream<T>) : ChangeStreamCursor<T> {
    private var cursor: PageCursor? = null
    private val batch = ArrayDeque<BsonDocument>()
    private var batchToken: BsonDocument? = null
    private var resumeNeeded = false
    private var closed = false

    override val resumeToken: BsonDocument? get() = stream.resumeToken

    /** Runs the stream's aggregate (under [initialTimeoutMS] when given, else the stream's timeoutMS). */
    suspend fun open(initialTimeoutMS: Long?) {
        val start = stream.start()
        val command = stream.command
        val c = PageCursor.of(command.cluster, command.database, command.command(start), command.cursorOptions(), retryableRead = true, initialTimeoutMS = initialTimeoutMS)
        cursor = c
        val first = try {
            c.open()
        } catch (e: Throwable) {
            cursor = null
            c.close()
            throw e
        }
        stream.opened = true
        // change-streams.md "startAtOperationTime": saved from an aggregate without a start option that returned nothing and no token
        val noStartOption = start is ChangeStreamCommand.Start.Now || (start is ChangeStreamCommand.Start.Original &&
            command.options.let { it.resumeAfter == null && it.startAfter == null && it.startAtOperationTime == null })
        if (noStartOption && first.isEmpty() && c.postBatchResumeToken == null && stream.operationTime == null) stream.operationTime = c.operationTime
        accept(first, c.postBatchResumeToken)
    }

    override suspend fun next(): ChangeStreamDocument<T>? {
        check(!closed) { "the change stream cursor is closed" }
        while (true) {
            if (batch.isNotEmpty()) return deliver()
            if (resumeNeeded) {
                resume(remainingMS = null)
                continue
            }
            val c = cursor ?: return null
            if (c.exhausted) return null
            getMore(c)
        }
    }

    override suspend fun tryNext(): ChangeStreamDocument<T>? {
        check(!closed) { "the change stream cursor is closed" }
        if (batch.isNotEmpty()) return deliver()
        if (resumeNeeded) {
            resume(remainingMS = null)
            if (batch.isNotEmpty()) return deliver()
        }
        val c = cursor ?: return null
        if (c.exhausted) return null
        getMore(c)
        return if (batch.isNotEmpty()) deliver() else null
    }

    override suspend fun close() {
        if (closed) return
        closed = true
        val c = cursor
        cursor = null
        batch.clear()
        try {
            c?.close()
        } finally {
            stream.released()
        }
    }

    /** One getMore; on a resumable error, one resume instead (its first batch is then the batch). */
    private suspend fun getMore(c: PageCursor) {
        val next = try {
            c.getMore()
        } catch (e: Throwable) {
            if (e is CancellationException) throw e
            if (e is MongoOperationTimeoutException) {
                // client-side-operations-timeout.md "Change Streams": not invalidated; the next call resumes
                resumeNeeded = true
                throw e
            }
            if (!ResumableChangeStreamError.isResumable(e, c.wireVersion)) throw e
            resume(c.iterationRemainingMS())
            return
        }
        accept(next, c.postBatchResumeToken)
    }

    /** Closes the cursor (killCursors on its server, errors ignored) and re-opens the stream, under [remainingMS] when given. */
    private suspend fun resume(remainingMS: Long?) {
        resumeNeeded = true
        val old = cursor
        cursor = null
        batch.clear()
        old?.close()
        if (remainingMS != null && remainingMS <= 0) throw MongoOperationTimeoutException("the change stream's timeoutMS expired before it could resume")
        open(remainingMS)
        resumeNeeded = false
    }

    /** A batch received: kept for delivery; an empty one's `postBatchResumeToken` is cached at once. */
    private fun accept(documents: List<BsonDocument>, postBatchResumeToken: BsonDocument?) {
        batch.addAll(documents)
        batchToken = postBatchResumeToken
        if (documents.isEmpty() && postBatchResumeToken != null) stream.resumeToken = postBatchResumeToken
    }

    /** The batch's next event, decoded; its token (or the batch's, for its last event) cached. */
    private suspend fun deliver(): ChangeStreamDocument<T> {
        val raw = batch.first()
        val id = raw["_id"]?.takeIf { it.isDocument }?.asDocument()
        if (id == null) {
            close()
            throw MongoChangeStreamException("Cannot provide resume functionality when the resume token is missing")
        }
        val event = stream.events.decode(raw, id)
        batch.removeFirst()
        stream.resumeToken = batchToken?.takeIf { batch.isEmpty() } ?: id
        stream.returnedDocument = true
        return event
    }
}
