package dev.mooring.bench.measure

import java.lang.management.ManagementFactory

/**
 * Process CPU time and bytes allocated by every live thread, read at the start and the end of a
 * measured window; given a `serverPid`, also the CPU time of that other process (the cell's
 * server JVM, which shares the machine's cores with the client). Allocation comes from
 * `com.sun.management.ThreadMXBean`, thread by thread ([Snapshot.allocatedSince]): a thread that
 * dies inside the window loses what it allocated in it (undercounted: the harness keeps its caller
 * threads alive until the end snapshot is taken), and never makes the window's allocation negative.
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

    /**
     * One reading. [serverCpuNanos]: -1 without a server to measure. [allocatedByThread]: each live
     * thread's id and the bytes it has allocated since it started.
     */
    class Snapshot(val cpuNanos: Long, val allocatedByThread: Map<Long, Long>, val wallNanos: Long, val serverCpuNanos: Long = -1) {
        /**
         * Bytes allocated between [start] and this reading, summed thread by thread over the threads
         * alive now: a thread started since [start] counts from zero. Summing the live threads' totals
         * at each end instead made a window negative when a thread that had allocated much before it
         * (a pool's worker retiring) died inside it: -37 KB per document in one full run's cell.
         */
        fun allocatedSince(start: Snapshot): Long {
            var sum = 0L
            for ((id, bytes) in allocatedByThread) sum += (bytes - (start.allocatedByThread[id] ?: 0L)).coerceAtLeast(0L)
            return sum
        }
    }

    fun snapshot(): Snapshot {
        val ids = threads.allThreadIds
        val alloc = threads.getThreadAllocatedBytes(ids)
        val byThread = HashMap<Long, Long>(ids.size * 2)
        for (i in ids.indices) if (alloc[i] >= 0) byThread[ids[i]] = alloc[i]
        return Snapshot(os.processCpuTime, byThread, System.nanoTime(), server?.let(::cpuNanosOf) ?: -1)
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
