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
                val ratios = ratios(inCell)
                if (ratios.isNotEmpty()) {
                    sb.append("| ").append(callers ?: "-").append(" | ").append(pool ?: "-").append(" | **mooring ÷ best official** | ")
                    sb.append(cols.joinToString(" | ") { c -> ratios[c]?.let { "**" + String.format(Locale.ROOT, "%.2f×", it) + "**" } ?: "" })
                    sb.append(" |\n")
                }
            }
        }
        return sb.toString()
    }

    /** Checked against maxPoolSize, not against the other library (fewer is not better). */
    private val NOT_COMPARED = setOf("connectionsCreated")

    /** Mooring's value divided by the better official value, per metric both sides report (connectionsCreated excepted). */
    fun ratios(cell: List<BenchRow>): Map<String, Double> {
        val m = cell.firstOrNull { it.library == Library.MOORING } ?: return emptyMap()
        val officials = cell.filter { it.library.official }
        if (officials.isEmpty()) return emptyMap()
        val out = LinkedHashMap<String, Double>()
        for ((k, mv) in m.metrics) {
            if (k !in Metrics.ORDER || k in NOT_COMPARED) continue
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
