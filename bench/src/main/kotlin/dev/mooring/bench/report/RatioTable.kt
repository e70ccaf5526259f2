package dev.mooring.bench.report

import java.util.Locale

/**
 * Renders rows as Markdown tables, one per scenario: a line per library and, per cell, a
 * `mooring ÷ best official` line. "Best" means the better official value in the metric's own
 * direction (higher ops/s, lower latency); so a ratio above 1 is good for ops/s and jain, and a
 * ratio below 1 is good for every other metric.
 */
object RatioTable {
    fun render(rows: List<BenchRow>): String {
        val sb = StringBuilder()
        for (scenario in Scenario.entries) {
            val rs = rows.filter { it.scenario == scenario }
            if (rs.isEmpty()) continue
            if (scenario.isWorkload) {
                renderWorkload(sb, scenario, rs)
                continue
            }
            val present = rs.flatMap { it.metrics.keys }.toSet()
            val cols = Metrics.ORDER.filter { it in present }
            sb.append("\n### ").append(scenario.key).append("\n\n")
            sb.append("| callers | maxPoolSize | library | ").append(cols.joinToString(" | ")).append(" |\n")
            sb.append("|---|---|---|").append(cols.joinToString("") { "---:|" }).append("\n")
            val cells = rs.map { it.callers to it.maxPoolSize }.distinct()
            for ((callers, pool) in cells) {
                val inCell = rs.filter { it.callers == callers && it.maxPoolSize == pool }
                val byLib = Library.entries.mapNotNull { lib -> inCell.firstOrNull { it.library == lib } }
                for (r in byLib) {
                    sb.append("| ").append(callers ?: "-").append(" | ").append(pool ?: "-").append(" | ").append(r.library.key).append(" | ")
                    sb.append(cols.joinToString(" | ") { c -> r.metrics[c]?.let(::fmt) ?: "" }).append(" |")
                    r.notes?.let { sb.append(" ").append(it) }
                    sb.append("\n")
                }
                ratioLine(sb, callers, pool, "mooring ÷ best official", cols, ratios(inCell))
                ratioLine(sb, callers, pool, "mooring ÷ floor", cols, floorRatios(inCell))
                // the paths most callers take (issue 34): a coroutine on Dispatchers.Default, a Java thread
                for (lib in DEFAULT_PATHS) {
                    ratioLine(sb, callers, pool, "${lib.key} ÷ best official", cols, ratios(inCell, lib))
                    ratioLine(sb, callers, pool, "${lib.key} ÷ floor", cols, floorRatios(inCell, lib))
                }
            }
        }
        return sb.toString()
    }

    /**
     * A workload task: a line per library for each (server, compressor) cell, then Mooring ÷ the
     * best official library, Mooring ÷ the Kotlin coroutine driver (issue 34's reference),
     * Mooring ÷ its floor where the task has one, and the Java facade ÷ the best official library.
     */
    private fun renderWorkload(sb: StringBuilder, scenario: Scenario, rs: List<BenchRow>) {
        val present = rs.flatMap { it.metrics.keys }.toSet()
        val cols = Metrics.ORDER.filter { it in present }
        sb.append("\n### ").append(scenario.key).append("\n\n")
        sb.append("| server | compressor | library | ").append(cols.joinToString(" | ")).append(" |\n")
        sb.append("|---|---|---|").append(cols.joinToString("") { "---:|" }).append("\n")
        for ((server, compressor) in rs.map { it.server to it.compressor }.distinct()) {
            val inCell = rs.filter { it.server == server && it.compressor == compressor }
            for (r in Library.entries.mapNotNull { lib -> inCell.firstOrNull { it.library == lib } }) {
                sb.append("| ").append(server ?: "-").append(" | ").append(compressor ?: "-").append(" | ").append(r.library.key).append(" | ")
                sb.append(cols.joinToString(" | ") { c -> r.metrics[c]?.let(::fmt) ?: "" }).append(" |")
                r.notes?.let { sb.append(" ").append(it) }
                sb.append("\n")
            }
            val label = { l: String -> "| ${server ?: "-"} | ${compressor ?: "-"} | **$l** | " }
            workloadRatioLine(sb, label("mooring ÷ best official"), cols, ratios(inCell))
            workloadRatioLine(sb, label("mooring ÷ kotlin-coroutine"), cols, ratiosTo(inCell, Library.KOTLIN_COROUTINE))
            workloadRatioLine(sb, label("mooring ÷ floor"), cols, ratiosTo(inCell, Library.FLOOR))
            workloadRatioLine(sb, label("mooring-java ÷ best official"), cols, ratios(inCell, Library.MOORING_JAVA))
        }
    }

    private fun workloadRatioLine(sb: StringBuilder, prefix: String, cols: List<String>, ratios: Map<String, Double>) {
        if (ratios.isEmpty()) return
        sb.append(prefix).append(cols.joinToString(" | ") { c -> ratios[c]?.let { "**" + String.format(Locale.ROOT, "%.2f×", it) + "**" } ?: "" })
        sb.append(" |\n")
    }

    /** Mooring's value divided by [other]'s, per metric both report (the cell's size, [Metrics.CELL_SIZE], excepted); empty without both rows. */
    fun ratiosTo(cell: List<BenchRow>, other: Library): Map<String, Double> {
        val m = cell.firstOrNull { it.library == Library.MOORING } ?: return emptyMap()
        val o = cell.firstOrNull { it.library == other } ?: return emptyMap()
        return m.metrics.mapNotNull { (k, mv) ->
            if (k !in Metrics.ORDER || k in Metrics.CELL_SIZE) return@mapNotNull null
            val ov = o.metrics[k]?.takeIf { it != 0.0 } ?: return@mapNotNull null
            k to mv / ov
        }.toMap()
    }

    private fun ratioLine(sb: StringBuilder, callers: Int?, pool: Int?, label: String, cols: List<String>, ratios: Map<String, Double>) {
        if (ratios.isEmpty()) return
        sb.append("| ").append(callers ?: "-").append(" | ").append(pool ?: "-").append(" | **").append(label).append("** | ")
        sb.append(cols.joinToString(" | ") { c -> ratios[c]?.let { "**" + String.format(Locale.ROOT, "%.2f×", it) + "**" } ?: "" })
        sb.append(" |\n")
    }

    /**
     * The metrics compared with the floor: what the raw socket loop also measures honestly. The
     * server's CPU per operation is among them because the floor's pre-encoded ping is the
     * cheapest command a server can be sent: on two shared cores, what Mooring's commands cost the
     * server beyond it is throughput lost to what the client sends, not to its own CPU.
     */
    private val FLOOR_COMPARED = listOf("opsPerSec", "cpuUsPerOp", "serverCpuUsPerOp")

    /** The callers' paths that get ratio lines of their own besides [Library.MOORING]'s in the ping cells. */
    private val DEFAULT_PATHS = listOf(Library.MOORING_DEFAULT, Library.MOORING_JAVA)

    /** [mooring]'s value divided by the floor's for ops/s and CPU per operation, its own and the server's (empty without both rows). */
    fun floorRatios(cell: List<BenchRow>, mooring: Library = Library.MOORING): Map<String, Double> {
        val m = cell.firstOrNull { it.library == mooring } ?: return emptyMap()
        val f = cell.firstOrNull { it.library == Library.FLOOR } ?: return emptyMap()
        return FLOOR_COMPARED.mapNotNull { k ->
            val mv = m.metrics[k] ?: return@mapNotNull null
            val fv = f.metrics[k]?.takeIf { it != 0.0 } ?: return@mapNotNull null
            k to mv / fv
        }.toMap()
    }

    /** Checked against maxPoolSize, not against the other library (fewer is not better). */
    private val NOT_COMPARED = setOf("connectionsCreated")

    /** [mooring]'s value divided by the better official value, per metric both sides report (connectionsCreated excepted). */
    fun ratios(cell: List<BenchRow>, mooring: Library = Library.MOORING): Map<String, Double> {
        val m = cell.firstOrNull { it.library == mooring } ?: return emptyMap()
        val officials = cell.filter { it.library.official }
        if (officials.isEmpty()) return emptyMap()
        val out = LinkedHashMap<String, Double>()
        for ((k, mv) in m.metrics) {
            if (k !in Metrics.ORDER || k in NOT_COMPARED || k in Metrics.CELL_SIZE) continue
            val ov = officials.mapNotNull { it.metrics[k] }
            if (ov.isEmpty()) continue
            val best = if (k in Metrics.LOWER_IS_BETTER) ov.min() else ov.max()
            if (best == 0.0) continue
            out[k] = mv / best
        }
        return out
    }

    fun fmt(v: Double): String = when {
        v >= 100 -> String.format(Locale.ROOT, "%,.0f", v)
        v >= 10 -> String.format(Locale.ROOT, "%.1f", v)
        else -> String.format(Locale.ROOT, "%.3f", v)
    }
}
