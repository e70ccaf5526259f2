package dev.mooring.bench.harness

import dev.mooring.bench.report.Aggregation
import dev.mooring.bench.report.BenchRow
import dev.mooring.bench.report.Library
import dev.mooring.bench.report.RatioTable
import dev.mooring.bench.report.ReportWriter
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.server.ServerMain
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.withOption
import dev.mooring.bench.workload.WorkloadTask
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.double
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.io.File
import java.nio.file.Path
import java.time.Instant

/**
 * The benchmark harness: `BenchMain --quick|--full|--smoke [--out report.json]`.
 *
 * Starts the servers (mongo-java-server, the ping responder, and in full mode the replica-set
 * simulator) and one worker JVM per library, warms each worker up, then runs the matrix,
 * alternating the libraries cell by cell (the first library rotates from cell to cell), and
 * repeats it [BenchPlan.repetitions] times. Cold start runs in fresh JVMs. Writes every
 * repetition and the medians to the report and prints the ratio table.
 */
object BenchMain {
    /** The harness's own settings its JVMs inherit: close tracing, and where the datasets are and get unpacked. */
    private val inherited = listOf("bench.traceClose", "bench.data", "bench.unpacked").mapNotNull { k -> System.getProperty(k)?.let { "-D$k=$it" } }
    private val workerJvm = listOf("-Xms512m", "-Xmx2g", "-XX:+UseG1GC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn") + inherited
    private val serverJvm = listOf("-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn") + inherited

    @JvmStatic
    fun main(args: Array<String>) {
        var plan: BenchPlan? = null
        var out = Path.of("bench/target/bench-report.json")
        var only: Set<Scenario>? = null
        var i = 0
        while (i < args.size) {
            when (args[i]) {
                "--quick" -> plan = BenchPlan.quick()
                "--full" -> plan = BenchPlan.full()
                "--smoke" -> plan = BenchPlan.smoke()
                "--out" -> out = Path.of(args.getOrNull(++i) ?: usage("--out needs a path"))
                "--only" -> only = (args.getOrNull(++i) ?: usage("--only needs scenario keys")).split(',').map { Scenario.of(it.trim()) }.toSet()
                else -> usage("unknown argument '${args[i]}'")
            }
            i++
        }
        val p = plan ?: usage("choose --quick or --full")
        val errors = run(only?.let { p.copy(only = it) } ?: p, out)
        if (errors > 0) {
            System.err.println("$errors cell(s) failed; see the notes in the report and the logs under ${logDir(out)}")
            kotlin.system.exitProcess(1)
        }
    }

    private fun usage(msg: String): Nothing {
        System.err.println("bench: $msg\nusage: bench/run --quick | --full   (harness: BenchMain --quick|--full|--smoke [--out file])")
        kotlin.system.exitProcess(2)
    }

    private fun logDir(out: Path): File = out.toAbsolutePath().parent.resolve("bench-logs").toFile()

    /** Runs [plan]; returns the number of failed cells. */
    fun run(plan: BenchPlan, out: Path): Int {
        val logs = logDir(out).also { it.mkdirs() }
        val started = System.nanoTime()
        val raw = ArrayList<BenchRow>()
        var errors = 0
        val say = { msg: String -> System.err.printf("[%6.1fs] %s%n", (System.nanoTime() - started) / 1e9, msg) }
        say("mode ${plan.mode}: ${plan.repetitions} repetition(s); logs in $logs")

        val servers = LinkedHashMap<Scenario, JvmProcess>()
        val targets = LinkedHashMap<Scenario, String>()
        val workers = LinkedHashMap<Library, JvmProcess>()
        try {
            for ((scenario, kind) in listOf(Scenario.PING_RESPONDER to "responder", Scenario.PING_MONGO_JAVA_SERVER to "mongo-java-server")) {
                val s = JvmProcess("server-$kind", "dev.mooring.bench.server.ServerMain", listOf(kind), serverJvm, File(logs, "server-$kind.log"))
                servers[scenario] = s
                targets[scenario] = s.expect("READY", 60_000)
            }
            if (plan.workloads.isNotEmpty()) {
                val export = if (plan.includes(Scenario.LDJSON_MULTI_FILE_EXPORT)) listOf(ServerMain.LDJSON_EXPORT) else emptyList()
                val s = JvmProcess("server-canned", "dev.mooring.bench.server.ServerMain", listOf("canned") + export, serverJvm, File(logs, "server-canned.log"))
                servers[Scenario.FIND_MANY] = s
                targets[Scenario.FIND_MANY] = s.expect("READY", 120_000)
            }
            if (plan.failoverElections > 0 && plan.includes(Scenario.FAILOVER_STREAM)) {
                val s = JvmProcess("server-replset", "dev.mooring.bench.server.ServerMain", listOf("replset"), serverJvm, File(logs, "server-replset.log"))
                servers[Scenario.FAILOVER_STREAM] = s
                targets[Scenario.FAILOVER_STREAM] = s.expect("READY", 60_000)
            }
            say("servers: $targets")

            fun runCell(lib: Library, worker: JvmProcess, cmd: CellCommand, record: Boolean, timeoutMs: Long = 600_000): Boolean {
                worker.send(cmd.toJson().toString())
                val reply = worker.readLine(timeoutMs)
                val (callers, pool) = identity(cmd)
                val row = when {
                    reply.startsWith("RESULT ") -> {
                        val o = Json.parseToJsonElement(reply.removePrefix("RESULT ")).jsonObject
                        BenchRow(lib, cmd.scenario, callers, pool, o.mapValues { it.value.jsonPrimitive.double }, server = cmd.server, compressor = cmd.compressor)
                    }
                    reply.startsWith("NA ") -> BenchRow(lib, cmd.scenario, callers, pool, emptyMap(), "not measured: " + reply.removePrefix("NA "), cmd.server, cmd.compressor)
                    else -> {
                        errors++
                        BenchRow(lib, cmd.scenario, callers, pool, emptyMap(), "failed: " + reply.removePrefix("ERROR ").take(300), cmd.server, cmd.compressor)
                    }
                }
                if (record) {
                    raw += row
                    ReportWriter.write(out, Aggregation.medians(raw)) // a partial report survives an interrupted run
                }
                val where = if (cmd.scenario.isWorkload) "server=${cmd.server} compressor=${cmd.compressor}" else "callers=${callers ?: "-"} pool=${pool ?: "-"}"
                say("${if (record) "" else "(warm-up) "}${lib.key} ${cmd.scenario.key} $where: " +
                    (row.notes ?: row.metrics.entries.joinToString(" ") { "${it.key}=${RatioTable.fmt(it.value)}" }))
                return row.notes == null
            }

            // ---- cold start: fresh JVMs, first thing they do ----
            repeat(if (plan.includes(Scenario.COLD_START)) plan.coldStartRuns else 0) { rep ->
                for (lib in rotate(Library.entries.filter { it.measures(Scenario.COLD_START) }, rep)) {
                    JvmProcess("cold-${lib.key}", "dev.mooring.bench.worker.WorkerMain", listOf(lib.key), workerJvm, File(logs, "cold-${lib.key}.log")).use { w ->
                        w.expect("READY", 60_000)
                        runCell(lib, w, CellCommand(Scenario.COLD_START, maxPoolSize = 10, target = targets.getValue(Scenario.PING_RESPONDER)), true, 120_000)
                    }
                }
            }

            // ---- one long-lived worker per library, each warmed up for ≥ jvmWarmupMs ----
            for (lib in Library.entries) {
                val w = JvmProcess("worker-${lib.key}", "dev.mooring.bench.worker.WorkerMain", listOf(lib.key), workerJvm, File(logs, "worker-${lib.key}.log"))
                workers[lib] = w
                w.expect("READY", 60_000)
                val warmStart = System.nanoTime()
                if (lib.measures(Scenario.PING_RESPONDER)) runCell(lib, w, CellCommand(Scenario.PING_RESPONDER, 64, 10, targets.getValue(Scenario.PING_RESPONDER), 0, plan.jvmWarmupMs * 7 / 10), false)
                if (lib.measures(Scenario.POOL_ONLY)) runCell(lib, w, CellCommand(Scenario.POOL_ONLY, 64, plan.poolOnlyConnections, "", 0, plan.jvmWarmupMs * 3 / 10), false)
                if (plan.includes(Scenario.WAITERS_100K) && lib.measures(Scenario.WAITERS_100K)) {
                    repeat(plan.waitersWarmupDrains) { runCell(lib, w, CellCommand(Scenario.WAITERS_100K, plan.waiters, 10, count = plan.waiters), false) }
                }
                say("${lib.key} warmed up for ${"%.1f".format((System.nanoTime() - warmStart) / 1e9)} s")
            }

            repeat(plan.repetitions) { rep ->
                say("---- repetition ${rep + 1}/${plan.repetitions} ----")
                var cellIndex = rep
                val cells = ArrayList<CellCommand>()
                for ((callers, pool) in plan.pingCells) {
                    for (s in listOf(Scenario.PING_RESPONDER, Scenario.PING_MONGO_JAVA_SERVER)) {
                        cells += CellCommand(s, callers, pool, targets.getValue(s), plan.cellWarmupMs, plan.pingMeasureMs, serverPid = servers.getValue(s).pid)
                    }
                }
                for (callers in plan.poolOnlyCallers) {
                    cells += CellCommand(Scenario.POOL_ONLY, callers, plan.poolOnlyConnections, "", plan.cellWarmupMs / 2, plan.poolMeasureMs)
                }
                repeat(plan.waitersDrainsPerRepetition) { cells += CellCommand(Scenario.WAITERS_100K, plan.waiters, 10, count = plan.waiters) }
                for (task in if (rep < plan.workloadRepetitions) plan.workloads else emptyList()) {
                    for ((server, compressor) in WORKLOAD_SERVERS.filter { (server, compressor) -> runsOn(task, server) && plan.compresses(task, compressor) }) {
                        val s = if (server == "canned") Scenario.FIND_MANY else Scenario.PING_MONGO_JAVA_SERVER
                        val base = targets.getValue(s)
                        val target = if (compressor == "none") base else withOption(base, "compressors", compressor)
                        val (warmup, measured) = plan.iterations(task)
                        cells += CellCommand(task, target = target, count = measured, warmupIterations = warmup,
                            serverPid = servers.getValue(s).pid, server = server, compressor = compressor, operations = plan.operations(task, server))
                    }
                }
                for (cmd in cells.filter { plan.includes(it.scenario) }) {
                    for (lib in rotate(Library.entries.filter { it.measures(cmd.scenario) }, cellIndex++)) runCell(lib, workers.getValue(lib), cmd, true)
                }
            }

            if (plan.failoverElections > 0 && plan.includes(Scenario.FAILOVER_STREAM)) {
                val control = targets.getValue(Scenario.FAILOVER_STREAM)
                // Warm-up, discarded: the replica-set JVM has not run an election yet, and neither worker has
                // run the replica-set paths of its SDAM; the first library measured would otherwise pay both.
                for (lib in listOf(Library.MOORING, Library.JAVA_SYNC)) {
                    runCell(lib, workers.getValue(lib), CellCommand(Scenario.FAILOVER_STREAM, 1, 10, control, count = plan.failoverWarmupElections), false)
                }
                for ((k, s) in listOf(Scenario.FAILOVER_STREAM, Scenario.FAILOVER_POLL).withIndex()) {
                    // The official driver's SDAM is shared by its sync and reactive clients: measured once, as java-sync.
                    for (lib in rotate(listOf(Library.MOORING, Library.JAVA_SYNC), k)) {
                        runCell(lib, workers.getValue(lib), CellCommand(s, 1, 10, control, count = plan.failoverElections), true)
                    }
                }
            }
        } finally {
            workers.values.forEach { runCatching { it.close() } }
            servers.values.forEach { runCatching { it.close() } }
        }

        val medians = Aggregation.medians(raw)
        ReportWriter.write(out, medians)
        val runsFile = out.resolveSibling("bench-runs.json")
        ReportWriter.write(runsFile, raw)
        val table = buildString {
            append("Mooring vs the official MongoDB Java drivers 5.6.5 (sync, reactive-streams, Kotlin coroutine) and the raw-socket floor — mode ").append(plan.mode)
            append(", ").append(plan.repetitions).append(" repetition(s), medians; ").append(Instant.now()).append("\n")
            append(RatioTable.render(medians))
        }
        File(out.toAbsolutePath().parent.toFile(), "bench-table.md").writeText(table)
        println(table)
        say("report: $out (every repetition: $runsFile)")
        return errors
    }

    /**
     * The workload cells' servers and compressors: the canned server without and with zstd, and
     * mongo-java-server without (it has no OP_COMPRESSED).
     */
    private val WORKLOAD_SERVERS = listOf("canned" to "none", "canned" to "zstd", "mongo-java-server" to "none")

    /**
     * Whether [task] runs on [server]: mongo-java-server has no `bulkWrite` command (MongoDB 8.0's client bulk write),
     * and the canned server stores no GridFS chunks to download (single or multi-file), nor the ODM models a find task reads back.
     */
    internal fun runsOn(task: Scenario, server: String): Boolean {
        val t = WorkloadTask.of(task)
        return when {
            t.isClientBulkWrite -> server == "canned"
            t.isGridFs || t.isGridFsMulti -> server == "mongo-java-server"
            t.isOdmFind -> server == "mongo-java-server"
            else -> true
        }
    }

    /** The report identity of a cell: waiters and cold start have no callers dimension that varies; a workload task has server and compressor instead. */
    private fun identity(cmd: CellCommand): Pair<Int?, Int?> = if (cmd.scenario.isWorkload) null to null else when (cmd.scenario) {
        Scenario.COLD_START -> null to cmd.maxPoolSize
        Scenario.FAILOVER_STREAM, Scenario.FAILOVER_POLL -> null to null
        Scenario.WAITERS_100K -> cmd.count to cmd.maxPoolSize
        else -> cmd.callers to cmd.maxPoolSize
    }

    private fun <T> rotate(list: List<T>, by: Int): List<T> {
        val k = by % list.size
        return list.drop(k) + list.take(k)
    }
}
