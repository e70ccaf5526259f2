package dev.mooring.bench.measure

import java.lang.management.ManagementFactory

/**
 * Process CPU time and bytes allocated by every live thread, read at the start and the end of a
 * measured window. Allocation comes from `com.sun.management.ThreadMXBean` summed over live
 * threads, so threads that die inside the window are undercounted: the harness keeps its caller
 * threads alive until the end snapshot is taken.
 */
class ResourceMeter {
    private val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
    private val threads = (ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean).also {
        if (it.isThreadAllocatedMemorySupported && !it.isThreadAllocatedMemoryEnabled) it.isThreadAllocatedMemoryEnabled = true
    }

    /** One reading. */
    class Snapshot(val cpuNanos: Long, val allocatedBytes: Long, val wallNanos: Long)

    fun snapshot(): Snapshot {
        val ids = threads.allThreadIds
        val alloc = threads.getThreadAllocatedBytes(ids)
        var sum = 0L
        for (a in alloc) if (a > 0) sum += a
        return Snapshot(os.processCpuTime, sum, System.nanoTime())
    }

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
