package dev.mooring.java.internal

import java.util.concurrent.Flow as JFlow
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * A [JFlow.Publisher] as a cold [Flow] that requests one item at a time, the next only once the
 * collector has taken the one before (so at most one item is buffered): each collection
 * subscribes anew, the publisher's `onError` is thrown from the flow, and a collector that stops
 * (or is cancelled) cancels the subscription. Stateless.
 */
internal object PublisherFlow {
    fun <T : Any> of(publisher: JFlow.Publisher<T>): Flow<T> = flow {
        val subscription = CompletableDeferred<JFlow.Subscription>()
        // one request outstanding at a time: a publisher that keeps to its demand never has more than one item here
        val items = Channel<T>(Channel.UNLIMITED)
        publisher.subscribe(object : JFlow.Subscriber<T> {
            override fun onSubscribe(s: JFlow.Subscription) {
                if (!subscription.complete(s)) s.cancel() // Reactive Streams rule 2.5: a second subscription is cancelled
            }

            override fun onNext(item: T) {
                items.trySend(item)
            }

            override fun onError(t: Throwable) {
                items.close(t)
            }

            override fun onComplete() {
                items.close()
            }
        })
        val s = subscription.await()
        try {
            while (true) {
                s.request(1)
                val next = items.receiveCatching()
                if (next.isClosed) {
                    next.exceptionOrNull()?.let { throw it }
                    break
                }
                emit(next.getOrThrow())
            }
        } finally {
            s.cancel() // after onComplete or onError a no-op (rule 3.7)
        }
    }
}
