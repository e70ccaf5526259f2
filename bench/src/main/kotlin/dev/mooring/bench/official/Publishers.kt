package dev.mooring.bench.official

import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/**
 * Subscribes to [p], requests everything, waits (at most 5 minutes) for the end on the calling
 * thread and returns how many items came; [onItem] sees each. An error is rethrown as an
 * [IllegalStateException]. How the benchmark waits for the reactive-streams driver.
 */
internal fun <T> drainPublisher(p: Publisher<T>, onItem: (T) -> Unit = {}): Int {
    val done = CountDownLatch(1)
    val n = AtomicInteger()
    val error = AtomicReference<Throwable>()
    p.subscribe(object : Subscriber<T> {
        override fun onSubscribe(s: Subscription) = s.request(Long.MAX_VALUE)
        override fun onNext(t: T) {
            n.incrementAndGet()
            onItem(t)
        }

        override fun onError(t: Throwable) {
            error.set(t)
            done.countDown()
        }

        override fun onComplete() = done.countDown()
    })
    check(done.await(5, TimeUnit.MINUTES)) { "the reactive driver did not finish" }
    error.get()?.let { throw IllegalStateException("the reactive driver failed: $it", it) }
    return n.get()
}
