package dev.mooring.bench.report

/** Folds repetitions of the same (library, cell) into one row of per-metric medians (worst of, for [WORST_OF]). */
object Aggregation {
    /**
     * Metrics that are a bound every repetition must keep, reported as the worst repetition rather
     * than the median: `fifoMaxDisplacement` (issue 20: ≤ 1,000 in every drain; with fifteen drains
     * per run a median would hide seven bad ones).
     */
    val WORST_OF: Set<String> = setOf("fifoMaxDisplacement")

    fun median(values: List<Double>): Double {
        require(values.isNotEmpty()) { "median of nothing" }
        val s = values.sorted()
        val m = s.size / 2
        return if (s.size % 2 == 1) s[m] else (s[m - 1] + s[m]) / 2
    }

    /**
     * One row per (library, scenario, callers, maxPoolSize), in first-seen order. Each metric is
     * the median over the rows that report it ([WORST_OF] metrics: the largest); `repetitions` counts the rows folded in (added only
     * when more than one and the rows carry metrics). Distinct notes are joined.
     */
    fun medians(rows: List<BenchRow>): List<BenchRow> {
        val groups = LinkedHashMap<Pair<Library, String>, MutableList<BenchRow>>()
        for (r in rows) groups.getOrPut(r.library to r.cellKey) { ArrayList() }.add(r)
        return groups.values.map { group ->
            val first = group.first()
            if (group.size == 1) return@map first
            val keys = LinkedHashSet<String>().apply { group.forEach { addAll(it.metrics.keys) } }
            val metrics = LinkedHashMap<String, Double>()
            for (k in keys) {
                val values = group.mapNotNull { it.metrics[k] }
                metrics[k] = if (k in WORST_OF) values.max() else median(values)
            }
            if (metrics.isNotEmpty()) metrics["repetitions"] = group.size.toDouble()
            val notes = group.mapNotNull { it.notes }.distinct().joinToString("; ").ifEmpty { null }
            first.copy(metrics = metrics, notes = notes)
        }
    }
}
