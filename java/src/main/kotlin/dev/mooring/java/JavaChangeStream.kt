package dev.mooring.java

import dev.mooring.driver.ChangeStreamDocument
import java.util.concurrent.Flow
import org.bson.BsonDocument

/**
 * A change stream for Java, from [JavaMongoCollection.watch], [JavaMongoDatabase.watch] or
 * [JavaMongoCluster.watch]: the Kotlin `ChangeStream`'s
 * semantics (change-streams.md: resumes once per resumable error after the last event delivered,
 * other errors end it with `onError`) as a cold [Flow.Publisher] of events, with the publishers'
 * rules of [JavaMongoCollection] (a getMore only with demand; `cancel()` kills the cursor on the
 * server and returns its connection). One subscriber at a time: a subscription while another is
 * active ends with `onError(IllegalStateException)`; a later subscription resumes after
 * [getResumeToken].
 *
 * **Concurrency.** [getResumeToken] may be called from any thread.
 */
public interface JavaChangeStream<T : Any> : Flow.Publisher<ChangeStreamDocument<T>> {
    /**
     * The token to resume after everything delivered (an event's `_id`, or the server's
     * `postBatchResumeToken` once a batch is delivered or came back empty), or null before any:
     * store it and pass it as `resumeAfter` to a later `watch`.
     */
    public fun getResumeToken(): BsonDocument?
}
