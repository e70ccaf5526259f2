package dev.mooring.driver

import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument

/**
 * A change stream (change-streams.md), from `watch` on a [MongoCollection], a [MongoDatabase] or a
 * cluster: a cold [Flow] of change events. Prefer it to an `aggregate` with a `$changeStream`
 * stage: only `watch` resumes. Change streams need a replica set or a sharded cluster and a read
 * concern of `majority` or none (others are left to the server to refuse).
 *
 * **Collecting.** Nothing is sent until collection starts. A collection opens the stream on a server
 * chosen by the read preference (`aggregate` with `$changeStream`, a retryable read) and then
 * waits for events with getMores (each waits on the server up to `maxAwaitTimeMS`), emitting each
 * event as it arrives; the next getMore is sent when the collector returns from `emit`. The flow
 * ends after an `invalidate` event (its collection dropped or renamed; `startAfter` its token to
 * go on), else only when the collector stops: cancelling the collector (or `take`, `first`, an
 * exception) kills the cursor on the server and returns its connection.
 *
 * **Resuming.** On a resumable error (a network error, a timeout, `CursorNotFound`, an error with
 * the `ResumableChangeStreamError` label, or before MongoDB 4.4 one of the listed codes) the
 * stream closes its cursor, selects a server again and re-opens after the last event it returned
 * (`resumeAfter` its [resumeToken]; `startAfter` while nothing was returned yet of a stream started
 * with `startAfter`; `startAtOperationTime` when no token is known), once per error. Any other
 * error ends the flow: an error of the resuming `aggregate`, a server error not resumable, or an
 * event without `_id` ([MongoChangeStreamException]: a pipeline that removes the resume token
 * gives up resumability).
 *
 * **Timeouts.** With a timeoutMS (the collection's, database's or cluster's), the opening `aggregate`
 * and each wait for the next event (its getMores and a resume, all together) get timeoutMS each;
 * `maxAwaitTimeMS` must then be below it (else [IllegalArgumentException] when collected). A wait
 * that times out ends the flow with `MongoOperationTimeoutException`; collecting this stream again
 * resumes it. If that happens before any event arrived, the server could not catch up with its
 * oplog within timeoutMS: re-create the stream with a higher timeoutMS.
 *
 * **Checkpointing.** [resumeToken] is the token to resume after everything this stream returned:
 * an event's `_id` after its `emit`, and the server's `postBatchResumeToken` after an empty batch
 * or the last event of a batch, so it moves on while no event arrives. Store it (for example after
 * each event, or periodically from another coroutine) and pass it as `resumeAfter` to a later `watch`.
 *
 * **Collecting again.** Collecting the same [ChangeStream] again (after the previous collection
 * ended, say with a timeout, or was cancelled) resumes after [resumeToken] as a resume does; a new
 * `watch` starts over. One collector at a time: collecting while another collection of the same
 * stream runs fails with [IllegalStateException]. [cursor] iterates the stream by hand instead.
 *
 * **Concurrency.** [resumeToken] may be read from any thread at any time.
 */
public interface ChangeStream<T : Any> : Flow<ChangeStreamDocument<T>> {
    /** The cached resume token (see "Checkpointing"), or null before the stream returned or saw one. */
    public val resumeToken: BsonDocument?

    /**
     * Opens the stream (its `aggregate`, or a resume when collected before) and returns a cursor to
     * iterate it by hand, one collector at a time as the flow's. Close it when done.
     */
    public suspend fun cursor(): ChangeStreamCursor<T>
}

/**
 * A change stream iterated by hand (see [ChangeStream.cursor]), with the flow's resume and timeout
 * rules. **Concurrency.** Not thread-safe: one coroutine calls [next], [tryNext] and [close];
 * [resumeToken] may be read from any thread.
 */
public interface ChangeStreamCursor<T : Any> {
    /** The cached resume token (see [ChangeStream.resumeToken]). */
    public val resumeToken: BsonDocument?

    /**
     * The next event: from the current batch, else from getMores (resuming as needed) until one
     * arrives. Null after an `invalidate` event was returned (the stream is over).
     */
    public suspend fun next(): ChangeStreamDocument<T>?

    /**
     * The next event when one is at hand or arrives with one getMore (resuming first when the
     * previous call failed with a timeout), else null: the way to see [resumeToken] move while no
     * event arrives.
     */
    public suspend fun tryNext(): ChangeStreamDocument<T>?

    /** Kills the cursor on the server (errors ignored) and returns its connection; idempotent. */
    public suspend fun close()
}

/**
 * A change stream cannot go on: an event without its `_id` (the resume token; a pipeline removed
 * it), which closes the stream.
 */
public class MongoChangeStreamException(message: String) : dev.mooring.events.MooringException(message)
