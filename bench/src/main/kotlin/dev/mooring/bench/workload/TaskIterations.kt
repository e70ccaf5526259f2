package dev.mooring.bench.workload

import dev.mooring.bench.measure.ResourceMeter
import dev.mooring.bench.worker.CellCommand

/** The phases of one workload task for one library (benchmarking.md, "Benchmark execution phases"). */
interface TaskOps : AutoCloseable {
    /** Once, before any iteration (client, dataset, the documents a find task reads). */
    fun setup()

    /** Before each iteration, untimed (drop and create the collection of an insert task). */
    fun beforeTask() {}

    /** The timed phase: the task's operations, every result consumed. */
    fun doTask()
}

/**
 * Runs a workload cell: setup, [CellCommand.warmupIterations] discarded iterations, then
 * [CellCommand.count] measured ones, each timed on the wall clock around [TaskOps.doTask] only,
 * with the client's CPU, the server's CPU and the allocation read around the same phase.
 *
 * Metrics: `medianMs` (the spec's nearest-rank median, [percentile]), `mbPerSec` (the task's
 * size in MB ÷ that median), `cpuUsPerMb` and `serverCpuUsPerMb` (over all measured iterations ÷
 * the MB they moved), `allocBytesPerDoc`, `iterations`.
 */
object TaskIterations {
    fun measure(cmd: CellCommand, task: WorkloadTask, ops: TaskOps): Map<String, Double> = ops.use {
        require(cmd.count >= 1) { "a workload cell needs at least one measured iteration" }
        ops.setup()
        repeat(cmd.warmupIterations) {
            ops.beforeTask()
            ops.doTask()
        }
        val meter = ResourceMeter(cmd.serverPid)
        val wall = LongArray(cmd.count)
        var cpu = 0L
        var serverCpu = 0L
        var alloc = 0L
        for (i in 0 until cmd.count) {
            ops.beforeTask()
            val a = meter.snapshot()
            ops.doTask()
            val b = meter.snapshot()
            wall[i] = b.wallNanos - a.wallNanos
            cpu += b.cpuNanos - a.cpuNanos
            alloc += b.allocatedSince(a)
            if (a.serverCpuNanos >= 0) serverCpu += b.serverCpuNanos - a.serverCpuNanos
        }
        summarize(task, wall, cpu, if (cmd.serverPid != null) serverCpu else null, alloc, operationsOf(cmd, task))
    }

    /** The operations per iteration of [cmd]'s cell of [task]: the task's, unless the plan scales it down ([CellCommand.operations]). */
    fun operationsOf(cmd: CellCommand, task: WorkloadTask): Int = if (cmd.operations > 0) cmd.operations else task.operations

    /**
     * The metrics of measured iterations: [wallNanos] per iteration, CPU and allocation summed over all of them. A
     * cell scaled down to [operations] (fewer than the task's) is scored on the same share of the task's size, and
     * reports its `operations`.
     */
    fun summarize(task: WorkloadTask, wallNanos: LongArray, cpuNanos: Long, serverCpuNanos: Long?, allocatedBytes: Long, operations: Int = task.operations): Map<String, Double> {
        require(operations in 1..task.operations) { "a cell runs 1..${task.operations} operations of ${task.scenario.key}, not $operations" }
        val medianNanos = percentile(wallNanos, 50)
        val mb = task.datasetBytes * (operations.toDouble() / task.operations) / 1e6
        val documents = task.documents.toLong() * operations / task.operations
        val totalMb = mb * wallNanos.size
        return buildMap {
            put("medianMs", medianNanos / 1e6)
            put("mbPerSec", mb / (medianNanos / 1e9))
            put("cpuUsPerMb", cpuNanos / 1e3 / totalMb)
            serverCpuNanos?.let { put("serverCpuUsPerMb", it / 1e3 / totalMb) }
            put("allocBytesPerDoc", allocatedBytes.toDouble() / (documents * wallNanos.size))
            put("iterations", wallNanos.size.toDouble())
            if (operations != task.operations) put("operations", operations.toDouble())
        }
    }

    /** benchmarking.md's nearest-rank percentile: sorted ascending, index `int(N * p / 100) - 1` (at least 0). */
    fun percentile(values: LongArray, p: Int): Long {
        require(values.isNotEmpty()) { "no iterations" }
        val sorted = values.sortedArray()
        return sorted[maxOf(0, values.size * p / 100 - 1)]
    }
}
