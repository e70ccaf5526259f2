package dev.mooring.java.internal

import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.sdam.internal.cursor.GetMoreDemand
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
 * A cursor as a [JFlow.Publisher] (cold: each subscription runs [source] anew). [source] starts
 * at the first request (the cursor's command is sent then) and hands its documents to a [Sink],
 * which delivers each as requested; [ofPages] sends the next getMore only once the subscriber has
 * demand after the batch before it, [ofDocuments] runs a cursor's document flow under
 * [GetMoreDemand] (its getMores wait for demand likewise). `cancel()` stops the
 * cursor (killCursors for a cursor still open on the server, bounded); a subscriber whose
 * `onNext` throws is cancelled likewise. Signals are serialized, on the coroutines of [scope],
 * and none comes before `onSubscribe` has returned (Reactive Streams rule 1.3), even for a
 * subscriber that requests, or requests n ≤ 0, from within `onSubscribe`. A subscriber whose
 * `onSubscribe` throws is treated as cancelled (rule 2.13). After `cancel()`, `request` is a
 * no-op (rule 3.6) and nothing is signalled; a subscription the cluster's close ends (the
 * subscriber still waiting for documents, or subscribed after the close) gets `onError` with
 * [MongoClusterClosedException] (rule 1.4), never silence.
 */
internal class CursorPublisher<T : Any>(
    private val scope: CoroutineScope,
    private val source: suspend (Sink<T>) -> Unit,
) : JFlow.Publisher<T> {
    /** Where [source] hands its documents; used only by the subscription's own coroutine. */
    interface Sink<T> {
        /** Waits for demand, then delivers [document] to the subscriber. */
        suspend fun emit(document: T)

        /** Returns once the subscriber has demand (at once when it has). */
        suspend fun awaitDemand()
    }

    override fun subscribe(subscriber: JFlow.Subscriber<in T>) {
        Objects.requireNonNull(subscriber, "subscriber")
        CursorSubscription(subscriber).start()
    }

    private inner class CursorSubscription(private val subscriber: JFlow.Subscriber<in T>) : JFlow.Subscription, Sink<T> {
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
                source(this)
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

        override suspend fun emit(document: T) {
            awaitDemand()
            demand.update { if (it == Long.MAX_VALUE) it else it - 1 }
            try {
                subscriber.onNext(document)
            } catch (e: Throwable) {
                throw SubscriberFailed(e)
            }
        }

        override suspend fun awaitDemand() {
            demand.first { it > 0 }
        }
    }

    private class SubscriberFailed(cause: Throwable) : RuntimeException(cause)

    companion object {
        private val log = LoggerFactory.getLogger(CursorPublisher::class.java)

        /** The documents of a cursor's [pages]: the next getMore only on demand after the batch before it; onComplete after an exhausted batch, demand or not. */
        fun ofPages(scope: CoroutineScope, pages: () -> Flow<CursorPage>): CursorPublisher<BsonDocument> = CursorPublisher(scope) { sink ->
            pages().collect { page ->
                page.error?.let { throw it }
                for (document in page.documents) sink.emit(document)
                if (!page.exhausted) sink.awaitDemand() // the next getMore only on demand
            }
        }

        /**
         * The documents of a cursor [documents] flow, collected under [GetMoreDemand]: each getMore
         * waits for the subscriber's demand, and the flow ends (onComplete) right after the batch
         * the server reported exhausted, so a subscriber whose demand ends with the last document
         * is completed without another request.
         */
        fun <T : Any> ofDocuments(scope: CoroutineScope, documents: Flow<T>): CursorPublisher<T> = CursorPublisher(scope) { sink ->
            withContext(GetMoreDemand { sink.awaitDemand() }) {
                documents.collect { document -> sink.emit(document) }
            }
        }
    }
}
