package dev.mooring.bench.workload

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/**
 * How the parallel tasks run their files, in each library's own style, at most [ParallelTaskOps.CONCURRENCY] at a time.
 */
object Concurrently {
    /** One coroutine per file on `Dispatchers.Default`, a semaphore letting [ParallelTaskOps.CONCURRENCY] run; the results in order. */
    suspend fun <T> coroutines(n: Int, block: suspend (Int) -> T): List<T> = coroutineScope {
        val permits = Semaphore(ParallelTaskOps.CONCURRENCY)
        List(n) { i -> async(Dispatchers.Default) { permits.withPermit { block(i) } } }.awaitAll()
    }

    /** One task per file submitted to [pool] (a fixed pool of [ParallelTaskOps.CONCURRENCY] platform threads), the caller waiting for all; the results in order. */
    fun <T> threads(pool: ExecutorService, n: Int, block: (Int) -> T): List<T> =
        pool.invokeAll(List(n) { i -> Callable { block(i) } }).map { it.get() }

    /**
     * Asynchronous chains: [start] begins file i and calls its callback once when it ends (with the error, or null);
     * [ParallelTaskOps.CONCURRENCY] are started by the caller, and each end starts the next file on the thread that
     * ended it. The caller waits for all; the first error is rethrown.
     */
    fun chains(n: Int, start: (Int, (Throwable?) -> Unit) -> Unit) {
        val next = AtomicInteger()
        val ended = CountDownLatch(n)
        val error = AtomicReference<Throwable>()
        fun launch() {
            val i = next.getAndIncrement()
            if (i >= n) return
            val once = java.util.concurrent.atomic.AtomicBoolean()
            val end = { t: Throwable? ->
                if (once.compareAndSet(false, true)) {
                    if (t != null) error.compareAndSet(null, t)
                    ended.countDown()
                    launch()
                }
            }
            try {
                start(i, end)
            } catch (t: Throwable) {
                end(t)
            }
        }
        repeat(minOf(n, ParallelTaskOps.CONCURRENCY)) { launch() }
        check(ended.await(10, TimeUnit.MINUTES)) { "the chains did not finish" }
        error.get()?.let { throw IllegalStateException("a chain failed: $it", it) }
    }
}
