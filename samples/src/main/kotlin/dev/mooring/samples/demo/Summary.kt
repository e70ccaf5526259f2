package dev.mooring.samples.demo

/** The summary the demo prints on exit. */
object Summary {
    /** A few lines: duration, operations and average ops/s, errors by type, checkout waits, pool activity (and step-downs and change stream events when there were any). */
    fun format(s: DemoSnapshot, stats: DemoStats, stepDowns: Int, changeEvents: Long? = null): String = buildString {
        val seconds = s.elapsedSeconds.coerceAtLeast(0.001)
        appendLine("Summary")
        appendLine("  ran %.1fs, topology %s".format(s.elapsedSeconds, s.topology.type.specName))
        appendLine("  operations %d (%.0f ops/s on average), errors %d".format(s.operations, s.operations / seconds, s.errors))
        stats.errorsByType().forEach { (type, n) -> appendLine("    $type: $n") }
        appendLine("  checkout wait p50 %s p95 %s p99 %s max %s over %d checkouts".format(
            formatMillis(s.p50Millis), formatMillis(s.p95Millis), formatMillis(s.p99Millis), formatMillis(s.maxWaitMillis), stats.checkoutWaits.count,
        ))
        appendLine("  connections created %d, checkout failures %d, pool clears %d, events %d".format(
            stats.connectionsCreated.get(), stats.checkoutFailures.get(), stats.poolClears.get(), stats.events.get(),
        ))
        if (stepDowns > 0) appendLine("  step-downs $stepDowns")
        if (changeEvents != null) appendLine("  change stream events $changeEvents")
    }
}
