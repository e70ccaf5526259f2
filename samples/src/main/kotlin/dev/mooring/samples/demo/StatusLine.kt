package dev.mooring.samples.demo

/**
 * The plain one-line status the demo prints once a second when standard output is not a
 * terminal (or with `--json`, on standard error):
 * `t=3s topology=Single ops/s=1234 ops=3700 errors=0 wait p50=0.010ms p99=0.120ms | 127.0.0.1:27017 Standalone rtt=0.4ms pool total=4 avail=3 inUse=1 pending=0 waiters=0`.
 */
object StatusLine {
    /** Formats [s] as one line (no newline). */
    fun format(s: DemoSnapshot): String = buildString {
        append("t=%.0fs topology=%s ops/s=%.0f ops=%d errors=%d wait p50=%s p99=%s".format(
            s.elapsedSeconds, s.topology.type.specName, s.opsPerSecond, s.operations, s.errors,
            formatMillis(s.p50Millis), formatMillis(s.p99Millis),
        ))
        for (row in s.servers) {
            val d = row.description
            append(" | ").append(d.address).append(' ').append(d.type.specName)
            d.roundTripTimeMillis?.let { append(" rtt=").append(formatMillis(it)) }
            row.pool?.let { p ->
                append(" pool total=${p.totalConnections} avail=${p.availableConnections} inUse=${p.inUseConnections} pending=${p.pendingConnections} waiters=${p.waitQueueSize}")
            }
        }
    }
}
