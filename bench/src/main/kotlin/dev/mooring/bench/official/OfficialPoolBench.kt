package dev.mooring.bench.official

import com.mongodb.internal.connection.BenchPoolAccess
import com.mongodb.internal.connection.InternalConnection
import dev.mooring.bench.measure.CallerWindow
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
        val error = AtomicReference<Throwable>()
        try {
            val threads = (0 until cmd.callers).map { i ->
                Thread({
                    val ctx = BenchPoolAccess.operationContext()
                    try {
                        while (!window.stop) {
                            pool.get(ctx).close()
                            window.count(i)
                        }
                    } catch (t: Throwable) {
                        error.compareAndSet(null, t)
                    }
                }, "pool-caller-$i").apply { isDaemon = true }
            }
            threads.forEach { it.start() }
            Thread.sleep(cmd.warmupMs)
            window.open()
            Thread.sleep(cmd.measureMs)
            window.close()
            window.stop = true
            threads.forEach { it.join() }
        } finally {
            pool.close()
        }
        error.get()?.let { throw IllegalStateException("a pool caller failed: $it", it) }
        return result(cmd, window, created)
    }

    /**
     * N callback chains, each keeping one getAsync in flight; a completed pair resubmits its next
     * checkout to a 2-thread executor (one per core), as a reactive pipeline would continue on
     * its scheduler rather than recursing on the thread that handed the connection over.
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
                val ctx = BenchPoolAccess.operationContext()
                val step = object : Runnable {
                    override fun run() {
                        if (window.stop) { finished.countDown(); return }
                        pool.getAsync(ctx) { c: InternalConnection?, t: Throwable? ->
                            if (t != null || c == null) {
                                error.compareAndSet(null, t ?: IllegalStateException("getAsync returned nothing"))
                                finished.countDown()
                            } else {
                                c.close()
                                window.count(i)
                                executor.execute(this)
                            }
                        }
                    }
                }
                executor.execute(step)
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
