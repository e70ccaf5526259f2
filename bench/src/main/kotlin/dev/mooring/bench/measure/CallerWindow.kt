package dev.mooring.bench.measure

import java.util.concurrent.atomic.AtomicLong

/**
 * The measured window of one throughput cell. Callers run from the start of the cell; only
 * operations that complete while [recording] is set are counted, each by its caller's own slot
 * (no shared counter in the hot path). The controller calls [open] after the cell's warm-up and
 * [close] at the end, then sets [stop] and waits for the callers before [summarize]. With a
 * [serverPid] (the cell's server JVM on this machine), [summarize] also reports the server's CPU
 * per operation over the same window, `serverCpuUsPerOp`: on two shared cores, the client's and
 * the server's CPU per operation together bound the throughput.
 */
class CallerWindow(val callers: Int, serverPid: Long? = null) {
    @Volatile var recording: Boolean = false
        private set
    @Volatile var stop: Boolean = false

    private val counts = LongArray(callers)
    private val histograms = Array(callers) { LatencyHistogram() }
    private val meter = ResourceMeter(serverPid)
    private var start: ResourceMeter.Snapshot? = null
    private var end: ResourceMeter.Snapshot? = null

    init {
        // The histograms above are the harness's, not the library's: 30 KB per caller, 15 MB at
        // 512 callers. Left young, they were copied by the cell's first young collection, a 5-8 ms
        // pause instead of 1-2 ms, and that collection fell inside the measured window for a
        // library that allocates little (Mooring, ~100 MB/s) but inside the warm-up for one that
        // allocates a lot (the reactive driver, ~550 MB/s): the measuring biased p99.9 against the
        // library that allocated less. A full collection here promotes them and clears the previous
        // cell's garbage, so every library's cell starts from the same heap. It runs before the
        // cell's warm-up, outside the window.
        System.gc()
    }

    /** The longest checkout wait reported by the library's own checkout events inside the window. */
    val maxWaitNanos: AtomicLong = AtomicLong()

    /** Connections the client created (counted over the whole cell, not only the window). */
    val connectionsCreated: AtomicLong = AtomicLong()

    /** Records one completed operation of caller [caller] that took [nanos]. */
    fun record(caller: Int, nanos: Long) {
        if (!recording) return
        counts[caller]++
        histograms[caller].record(nanos)
    }

    /** Records a checkout wait from a library event. */
    fun checkoutWait(nanos: Long) {
        if (!recording) return
        while (true) {
            val cur = maxWaitNanos.get()
            if (nanos <= cur || maxWaitNanos.compareAndSet(cur, nanos)) return
        }
    }

    fun open() {
        maxWaitNanos.set(0)
        start = meter.snapshot()
        recording = true
    }

    fun close() {
        recording = false
        end = meter.snapshot()
    }

    /** The report metrics of the window. [withLatency]: include percentiles (false for pool-only). */
    fun summarize(withLatency: Boolean = true, withWait: Boolean = true): MutableMap<String, Double> {
        val s = checkNotNull(start) { "window never opened" }
        val e = checkNotNull(end) { "window never closed" }
        val ops = counts.sum()
        check(ops > 0) { "no operation completed in the measured window" }
        val seconds = (e.wallNanos - s.wallNanos) / 1e9
        val out = LinkedHashMap<String, Double>()
        out["opsPerSec"] = ops / seconds
        if (withLatency) {
            val h = LatencyHistogram()
            histograms.forEach { h.merge(it) }
            out["p50Us"] = h.quantile(0.5) / 1e3
            out["p99Us"] = h.quantile(0.99) / 1e3
            out["p999Us"] = h.quantile(0.999) / 1e3
        }
        if (withWait) out["maxWaitUs"] = maxWaitNanos.get() / 1e3
        out["jain"] = Fairness.jain(counts)
        out["cpuUsPerOp"] = (e.cpuNanos - s.cpuNanos) / 1e3 / ops
        out["allocBytesPerOp"] = e.allocatedSince(s).toDouble() / ops
        if (s.serverCpuNanos >= 0) out["serverCpuUsPerOp"] = (e.serverCpuNanos - s.serverCpuNanos) / 1e3 / ops
        out["ops"] = ops.toDouble()
        return out
    }
}

/** Counts one completed pair of [caller] without timing it (pool-only cells). */
fun CallerWindow.count(caller: Int) = record(caller, 0)
