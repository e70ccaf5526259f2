package dev.mooring.bench.harness

import dev.mooring.bench.report.Scenario
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.WorkloadTask

/** What one run measures and for how long. */
data class BenchPlan(
    val mode: String,
    val repetitions: Int,
    /** (callers, maxPoolSize) of the ping cells, run against both servers. */
    val pingCells: List<Pair<Int, Int>>,
    val poolOnlyCallers: List<Int>,
    val poolOnlyConnections: Int = 10,
    val cellWarmupMs: Long,
    val pingMeasureMs: Long,
    val poolMeasureMs: Long,
    /** Warm-up of each library's JVM before its first measured cell (the method asks for ≥ 10 s). */
    val jvmWarmupMs: Long,
    val waiters: Int,
    /**
     * Discarded drains of [waiters] each library runs while it warms up: a measured cell runs one
     * drain, and the first drains of a JVM measure its JIT (about 220 ms, then 90, then 37, then
     * 25–29 ms in steady state for both pools), not the pool.
     */
    val waitersWarmupDrains: Int = 4,
    /**
     * Measured drains of [waiters] per repetition, each a cell of its own (the libraries take
     * turns, drain by drain); the report gives the median of all of them (the run order: the worst,
     * see [dev.mooring.bench.report.Aggregation.WORST_OF]). One drain is a single sample: in one JVM
     * in steady state, Mooring's drains moved between 20 and 46 ms from one drain to the next and
     * the reactive pool's between 27 and 44 ms (bench/README, part 8), so a median of three single
     * drains decided the target by chance.
     */
    val waitersDrainsPerRepetition: Int = 5,
    val coldStartRuns: Int,
    val failoverElections: Int,
    /** Elections of the discarded failover warm-up cell each library runs before the measured failover cells. */
    val failoverWarmupElections: Int = 20,
    /** Run only these scenarios (development runs); null = all. */
    val only: Set<Scenario>? = null,
    /** The workload tasks' discarded and measured iterations per cell (benchmarking.md asks for up to 100; see bench/README). */
    val workloadWarmupIterations: Int = 1,
    val workloadIterations: Int = 3,
    /**
     * Workload tasks this plan runs shorter: [slowWorkloadWarmupIterations] and [slowWorkloadIterations] instead, and
     * no zstd cell (quick mode: the collection mixed bulk write, 30,000 one-statement commands per iteration, and the
     * ODM tasks, one command per model operation, which quick mode also scales down: [odmOperations]).
     */
    val slowWorkloads: Set<Scenario> = emptySet(),
    val slowWorkloadWarmupIterations: Int = 1,
    val slowWorkloadIterations: Int = 2,
    /** The ODM tasks' operations per iteration when this plan scales them down (quick mode); null: the spec's 10,000. */
    val odmOperations: Int? = null,
    /**
     * The LDJSON tasks' files per iteration on the canned server and on mongo-java-server (null: the spec's 100, 500,000
     * documents). mongo-java-server keeps documents as Java objects in its 1 GB heap: 500,000 TWEET-like documents do
     * not fit, so full mode scales that server's cells down.
     */
    val ldjsonFiles: Int? = null,
    val ldjsonFilesMongoJavaServer: Int? = null,
    /** The GridFS multi-file tasks' files per iteration (null: the spec's 50, 262 MB). */
    val gridFsMultiFiles: Int? = null,
    /** The parallel tasks' discarded and measured iterations per cell (each moves hundreds of MB). */
    val parallelWarmupIterations: Int = 1,
    val parallelIterations: Int = 2,
    /** Whether the parallel LDJSON tasks also run with zstd on the canned server (quick mode: no, to keep it short). */
    val parallelZstd: Boolean = true,
    /** Whether any workload task has a zstd cell on the canned server (quick mode: no; full mode runs them all). */
    val zstdWorkloads: Boolean = true,
    /**
     * The operations per iteration of the tasks of one command per operation ([DocumentTaskOps.scalable]: find one by
     * `_id`, small doc insertOne, the collection mixed bulk write's copies) when the plan scales them down (quick mode);
     * null: the spec's 10,000.
     */
    val singleDocOperations: Int? = null,
    /**
     * The repetitions that run the workload cells (the first ones): a workload cell already takes the median of its
     * [workloadIterations], so full mode runs them once, not in each of its [repetitions] of the ping matrix.
     */
    val workloadRepetitions: Int = repetitions,
) {
    /** The workload tasks this plan runs. */
    val workloads: List<Scenario> get() = Scenario.entries.filter { it.isWorkload && includes(it) }

    /** The (discarded, measured) iterations of [task]'s cells. */
    fun iterations(task: Scenario): Pair<Int, Int> = when {
        WorkloadTask.of(task).isParallel -> parallelWarmupIterations to parallelIterations
        task in slowWorkloads -> slowWorkloadWarmupIterations to slowWorkloadIterations
        else -> workloadWarmupIterations to workloadIterations
    }

    /**
     * The operations per iteration of [task]'s cells on [server] ([dev.mooring.bench.worker.CellCommand.operations]: 0 is
     * the task's own; for a parallel task, its files).
     */
    fun operations(task: Scenario, server: String): Int {
        val t = WorkloadTask.of(task)
        return when {
            task.isOdm -> odmOperations ?: 0
            t in DocumentTaskOps.scalable -> singleDocOperations ?: 0
            t.isLdjson -> (if (server == "mongo-java-server") ldjsonFilesMongoJavaServer ?: ldjsonFiles else ldjsonFiles) ?: 0
            t.isGridFsMulti -> gridFsMultiFiles ?: 0
            else -> 0
        }
    }

    /** Whether [task] has a cell with [compressor] in this plan. */
    fun compresses(task: Scenario, compressor: String): Boolean =
        compressor == "none" || (zstdWorkloads && task !in slowWorkloads && (parallelZstd || !WorkloadTask.of(task).isParallel))

    fun includes(s: Scenario): Boolean = only == null || s in only || (s == Scenario.FAILOVER_POLL && Scenario.FAILOVER_STREAM in only)

    companion object {
        fun quick() = BenchPlan(
            mode = "quick", repetitions = 1,
            pingCells = listOf(64 to 10, 512 to 10),
            poolOnlyCallers = listOf(1, 8, 64, 512),
            cellWarmupMs = 1_000, pingMeasureMs = 3_000, poolMeasureMs = 2_000, jvmWarmupMs = 10_000,
            waiters = 100_000, coldStartRuns = 1, failoverElections = 0,
            workloadWarmupIterations = 1, workloadIterations = 4,
            slowWorkloads = setOf(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED) + Scenario.entries.filter { it.isOdm },
            odmOperations = 2_000,
            ldjsonFiles = 5, gridFsMultiFiles = 10, parallelWarmupIterations = 1, parallelIterations = 2, parallelZstd = false,
            zstdWorkloads = false, singleDocOperations = 2_000,
        )

        fun full() = BenchPlan(
            mode = "full", repetitions = 3,
            pingCells = listOf(1, 8, 64, 512).flatMap { c -> listOf(c to 10, c to 100) },
            poolOnlyCallers = listOf(1, 8, 64, 512),
            cellWarmupMs = 1_000, pingMeasureMs = 3_000, poolMeasureMs = 2_000, jvmWarmupMs = 10_000,
            waiters = 100_000, coldStartRuns = 3, failoverElections = 20,
            workloadWarmupIterations = 3, workloadIterations = 10,
            ldjsonFilesMongoJavaServer = 20, parallelWarmupIterations = 1, parallelIterations = 3,
            workloadRepetitions = 1,
        )

        /** A very short run that only checks the harness end to end (numbers are meaningless). */
        fun smoke() = BenchPlan(
            mode = "smoke", repetitions = 1,
            pingCells = listOf(8 to 10),
            poolOnlyCallers = listOf(1, 64),
            cellWarmupMs = 200, pingMeasureMs = 500, poolMeasureMs = 300, jvmWarmupMs = 1_000,
            waiters = 10_000, waitersWarmupDrains = 1, waitersDrainsPerRepetition = 1, coldStartRuns = 1, failoverElections = 3, failoverWarmupElections = 2,
            workloadWarmupIterations = 0, workloadIterations = 1,
            ldjsonFiles = 2, gridFsMultiFiles = 2, parallelWarmupIterations = 0, parallelIterations = 1,
        )
    }
}
