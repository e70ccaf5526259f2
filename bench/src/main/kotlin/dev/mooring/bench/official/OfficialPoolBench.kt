package dev.mooring.bench.official

import com.mongodb.internal.connection.BenchPoolAccess
import com.mongodb.internal.connection.InternalConnection
import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.PlatformCallers
import dev.mooring.bench.measure.DrainOrder
import dev.mooring.bench.measure.ResourceMeter
import dev.mooring.bench.measure.count
import dev.mooring.bench.worker.CellCommand
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/** The official driver's internal pool (DefaultConnectionPool, 5.6.x) over fake connections. */
internal object OfficialPoolBench {
    /** N platform threads, each looping get() + close(). */
    fun syncPairs(cmd: CellCommand): Map<String, Double> {
        val created = AtomicInteger()
        val pool = BenchPoolAccess.pool(cmd.maxPoolSize, created)
        val window = CallerWindow(cmd.callers)
        try {
            PlatformCallers.run(window, cmd.callers, "pool-caller", cmd.warmupMs, cmd.measureMs) { i ->
                val ctx = BenchPoolAccess.operationContext()
                while (!window.stop) {
                    pool.get(ctx).close()
                    window.count(i)
                }
            }
        } finally {
            pool.close()
        }
        return result(cmd, window, created)
    }

    /**
     * N callback chains, each keeping one getAsync in flight, started on a 2-thread executor (one
     * per core, standing in for a reactive scheduler). A checkout that completes inline continues
     * inline (as a reactive pipeline would), up to [INLINE_BATCH] pairs per executor turn so a
     * chain that never waits cannot monopolise a thread; one completed later by the pool's own
     * thread continues on the executor.
     */
    fun asyncPairs(cmd: CellCommand): Map<String, Double> {
        val created = AtomicInteger()
        val pool = BenchPoolAccess.pool(cmd.maxPoolSize, created)
        val window = CallerWindow(cmd.callers)
        val executor = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors())
        val finished = CountDownLatch(cmd.callers)
        val error = AtomicReference<Throwable>()
        try {
            for (i in 0 until cmd.callers) {
                executor.execute(AsyncChain(i, pool, window, executor, finished, error))
            }
            Thread.sleep(cmd.warmupMs)
            window.open()
            Thread.sleep(cmd.measureMs)
            window.close()
            window.stop = true
            check(finished.await(60, TimeUnit.SECONDS)) { "async chains did not stop" }
        } finally {
            executor.shutdown()
            pool.close()
        }
        error.get()?.let { throw IllegalStateException("an async pool caller failed: $it", it) }
        return result(cmd, window, created)
    }

    private const val INLINE_BATCH = 16
    private const val CALLING = 0
    private const val RETURNED = 1
    private const val COMPLETED_INLINE = 2

    private class AsyncChain(
        val i: Int,
        val pool: BenchPoolAccess.BenchPool,
        val window: CallerWindow,
        val executor: java.util.concurrent.Executor,
        val finished: CountDownLatch,
        val error: AtomicReference<Throwable>,
    ) : Runnable {
        private val ctx = BenchPoolAccess.operationContext()
        private val state = AtomicInteger()

        override fun run() {
            var inline = 0
            while (true) {
                if (window.stop) { finished.countDown(); return }
                state.set(CALLING)
                pool.getAsync(ctx) { c, t ->
                    if (t != null || c == null) {
                        error.compareAndSet(null, t ?: IllegalStateException("getAsync returned nothing"))
                        window.stop = true
                    } else {
                        c.close()
                        window.count(i)
                    }
                    // completed later, on the pool's thread: continue on the executor
                    if (!state.compareAndSet(CALLING, COMPLETED_INLINE)) executor.execute(this)
                }
                if (state.compareAndSet(CALLING, RETURNED)) return // the callback will continue the chain
                if (++inline >= INLINE_BATCH) { executor.execute(this); return }
            }
        }
    }

    private fun result(cmd: CellCommand, window: CallerWindow, created: AtomicInteger): Map<String, Double> {
        val m = window.summarize(withLatency = false, withWait = false)
        m["connectionsCreated"] = created.get().toDouble()
        if (cmd.callers == 1) m["pairNs"] = 1e9 / m.getValue("opsPerSec")
        return m
    }

    /** [CellCommand.count] getAsync checkouts queued behind an exhausted pool, then drained. */
    fun asyncWaiters(cmd: CellCommand): Map<String, Double> {
        val n = cmd.count
        val created = AtomicInteger()
        val pool = BenchPoolAccess.pool(cmd.maxPoolSize, created)
        val meter = ResourceMeter()
        val order = DrainOrder(n)
        val done = CountDownLatch(n)
        val error = AtomicReference<Throwable>()
        try {
            val ctx = BenchPoolAccess.operationContext()
            val held = (0 until cmd.maxPoolSize).map { pool.get(ctx) }
            val before = meter.settledHeapBytes()
            for (i in 0 until n) {
                // one context per operation, as the driver does
                pool.getAsync(BenchPoolAccess.operationContext()) { c: InternalConnection?, t: Throwable? ->
                    if (t != null || c == null) error.compareAndSet(null, t ?: IllegalStateException("getAsync returned nothing"))
                    else {
                        order.served(i)
                        c.close()
                    }
                    done.countDown()
                }
            }
            val heap = meter.settledHeapBytes() - before
            check(order.servedCount == 0) { "a waiter was served while the pool was exhausted" }
            val t0 = System.nanoTime()
            held.forEach { it.close() }
            check(done.await(10, TimeUnit.MINUTES)) { "waiters did not drain" }
            val drainNanos = System.nanoTime() - t0
            error.get()?.let { throw IllegalStateException("a waiter failed: $it", it) }
            return linkedMapOf(
                "heapMb" to heap / 1048576.0,
                "drainMs" to drainNanos / 1e6,
                "fifoMaxDisplacement" to order.maxDisplacement().toDouble(),
                "waiters" to n.toDouble(),
                "connectionsCreated" to created.get().toDouble(),
            )
        } finally {
            pool.close()
        }
    }
}
