package dev.mooring.bench.report

/** Folds repetitions of the same (library, cell) into one row of per-metric medians. */
object Aggregation {
    fun median(values: List<Double>): Double {
        require(values.isNotEmpty()) { "median of nothing" }
        val s = values.sorted()
        val m = s.size / 2
        return if (s.size % 2 == 1) s[m] else (s[m - 1] + s[m]) / 2
    }

    /**
     * One row per (library, scenario, callers, maxPoolSize), in first-seen order. Each metric is
     * the median over the rows that report it; `repetitions` counts the rows folded in (added only
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
            for (k in keys) metrics[k] = median(group.mapNotNull { it.metrics[k] })
            if (metrics.isNotEmpty()) metrics["repetitions"] = group.size.toDouble()
            val notes = group.mapNotNull { it.notes }.distinct().joinToString("; ").ifEmpty { null }
            first.copy(metrics = metrics, notes = notes)
        }
    }
}
