package dev.mooring.java.internal

import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.slf4j.LoggerFactory
import java.util.Objects
import java.util.concurrent.Flow as JFlow

/**
 * A cursor as a [JFlow.Publisher] (cold: each subscription runs the command anew). The command
 * is sent at the first request; documents are delivered as requested, and the next getMore is
 * sent only once the subscriber has demand after the batch before it. `cancel()` stops the
 * cursor (killCursors for a cursor still open on the server, bounded); a subscriber whose
 * `onNext` throws is cancelled likewise. Signals are serialized, on the coroutines of [scope],
 * and none comes before `onSubscribe` has returned (Reactive Streams rule 1.3), even for a
 * subscriber that requests, or requests n ≤ 0, from within `onSubscribe`. A subscriber whose
 * `onSubscribe` throws is treated as cancelled (rule 2.13). After `cancel()`, `request` is a
 * no-op (rule 3.6) and nothing is signalled; a subscription the cluster's close ends (the
 * subscriber still waiting for documents, or subscribed after the close) gets `onError` with
 * [MongoClusterClosedException] (rule 1.4), never silence.
 */
internal class CursorPublisher(private val scope: CoroutineScope, private val pages: () -> Flow<CursorPage>) : JFlow.Publisher<BsonDocument> {
    override fun subscribe(subscriber: JFlow.Subscriber<in BsonDocument>) {
        Objects.requireNonNull(subscriber, "subscriber")
        CursorSubscription(subscriber).start()
    }

    private inner class CursorSubscription(private val subscriber: JFlow.Subscriber<in BsonDocument>) : JFlow.Subscription {
        private val demand = MutableStateFlow(0L)
        @Volatile private var invalidRequest: Long? = null
        @Volatile private var cancelled = false
        /** Completed when `onSubscribe` has returned: no other signal may overlap it (rule 1.3). */
        private val subscribed = CompletableDeferred<Unit>()
        // ATOMIC: the body runs even when cancelled at once (request(0) must still signal onError);
        // it signals nothing before onSubscribe has returned, so it may start before
        private val job: Job = scope.launch(start = CoroutineStart.ATOMIC) { run() }

        fun start() {
            try {
                subscriber.onSubscribe(this)
            } catch (e: Throwable) {
                log.warn("a cursor subscriber's onSubscribe threw; the subscription is cancelled", e)
                job.cancel()
            } finally {
                subscribed.complete(Unit)
            }
        }

        override fun request(n: Long) {
            if (cancelled) return // rule 3.6
            if (n <= 0) {
                invalidRequest = n
                job.cancel()
                return
            }
            demand.update { d -> if (d + n < 0) Long.MAX_VALUE else d + n }
        }

        override fun cancel() {
            cancelled = true
            job.cancel()
        }

        private suspend fun run() {
            val failure = try {
                subscribed.await()
                awaitDemand()
                pages().collect { page ->
                    page.error?.let { throw it }
                    for (document in page.documents) {
                        awaitDemand()
                        demand.update { if (it == Long.MAX_VALUE) it else it - 1 }
                        try {
                            subscriber.onNext(document)
                        } catch (e: Throwable) {
                            throw SubscriberFailed(e)
                        }
                    }
                    if (!page.exhausted) awaitDemand() // the next getMore only on demand
                }
                null
            } catch (e: SubscriberFailed) {
                log.warn("a cursor subscriber's onNext threw; the subscription is cancelled", e.cause)
                return
            } catch (e: CancellationException) {
                val n = invalidRequest
                when {
                    n != null -> IllegalArgumentException("request($n): the demand must be positive (Reactive Streams rule 3.9)")
                    cancelled -> return // cancelled by the subscriber: no signal
                    else -> MongoClusterClosedException("the cluster was closed before the cursor was read to its end")
                }
            } catch (e: Throwable) {
                e
            }
            withContext(NonCancellable) { subscribed.await() } // rule 1.3: onError for request(0) made inside onSubscribe waits for it to return
            if (failure == null) subscriber.onComplete() else subscriber.onError(failure)
        }

        private suspend fun awaitDemand() {
            demand.first { it > 0 }
        }
    }

    private class SubscriberFailed(cause: Throwable) : RuntimeException(cause)

    private companion object {
        val log = LoggerFactory.getLogger(CursorPublisher::class.java)
    }
}
