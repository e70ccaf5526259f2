package dev.mooring.bench.measure

import java.lang.management.ManagementFactory

/**
 * Process CPU time and bytes allocated by every live thread, read at the start and the end of a
 * measured window; given a `serverPid`, also the CPU time of that other process (the cell's
 * server JVM, which shares the machine's cores with the client). Allocation comes from
 * `com.sun.management.ThreadMXBean` summed over live threads, so threads that die inside the
 * window are undercounted: the harness keeps its caller threads alive until the end snapshot is
 * taken.
 */
class ResourceMeter(serverPid: Long? = null) {
    private val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
    private val threads = (ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean).also {
        if (it.isThreadAllocatedMemorySupported && !it.isThreadAllocatedMemoryEnabled) it.isThreadAllocatedMemoryEnabled = true
    }

    /**
     * The server to measure: null without a pid, and also when this platform does not let one
     * process read another's CPU time (then the cell reports no `serverCpuUsPerOp`, and says so
     * on the worker's log, rather than failing every ping cell).
     */
    private val server: ProcessHandle? = serverPid?.let { pid ->
        val p = ProcessHandle.of(pid).orElseThrow { IllegalArgumentException("no process $pid to measure") }
        if (p.info().totalCpuDuration().isPresent) {
            p
        } else {
            System.err.println("the CPU time of process $pid is not readable here: serverCpuUsPerOp is not reported")
            null
        }
    }

    /** One reading. [serverCpuNanos]: -1 without a server to measure. */
    class Snapshot(val cpuNanos: Long, val allocatedBytes: Long, val wallNanos: Long, val serverCpuNanos: Long = -1)

    fun snapshot(): Snapshot {
        val ids = threads.allThreadIds
        val alloc = threads.getThreadAllocatedBytes(ids)
        var sum = 0L
        for (a in alloc) if (a > 0) sum += a
        return Snapshot(os.processCpuTime, sum, System.nanoTime(), server?.let(::cpuNanosOf) ?: -1)
    }

    /**
     * The total CPU time of [p] (user and system, all threads, read by the JDK from `/proc` on
     * Linux, in clock ticks: 10 ms, 0.3% of a 3 s window at one core). A server that exits
     * during the cell fails the cell rather than reporting a wrong number.
     */
    private fun cpuNanosOf(p: ProcessHandle): Long =
        p.info().totalCpuDuration().orElseThrow { IllegalStateException("the CPU time of process ${p.pid()} is not readable") }.toNanos()

    /** Heap in use after asking for a full collection (best effort: a few GCs and a pause). */
    fun settledHeapBytes(): Long {
        val mem = ManagementFactory.getMemoryMXBean()
        repeat(3) {
            System.gc()
            Thread.sleep(100)
        }
        return mem.heapMemoryUsage.used
    }
}
