package dev.mooring.samples.demo

import java.time.Instant
import java.time.ZoneId
import java.time.format.DateTimeFormatter

/**
 * The live ANSI view (standard output is a terminal): redrawn in place a few times a second.
 * [frame] builds one full screen; [enter]/[leave] switch to and from the terminal's alternate
 * screen so the shell's scrollback is left as it was.
 */
class TerminalView(private val header: String, private val hint: String) {
    /** Escape codes that switch to the alternate screen and hide the cursor. */
    fun enter(): String = "$ESC[?1049h$ESC[?25l"

    /** Escape codes that restore the normal screen and the cursor. */
    fun leave(): String = "$ESC[?25h$ESC[?1049l"

    /** One full frame: cursor home, every line cleared to its end, the rest of the screen cleared. */
    fun frame(s: DemoSnapshot, recent: List<String>, notice: String?): String = buildString {
        append("$ESC[H")
        fun line(text: String = "") = append(text).append("$ESC[K\n")
        line("$BOLD Mooring demo $RESET  $header")
        line("$DIM$hint$RESET")
        line()
        val setName = s.topology.setName?.let { " ($it)" } ?: ""
        line("Topology  $BOLD${s.topology.type.specName}$RESET$setName     up %.0fs".format(s.elapsedSeconds))
        line("ops/s     $BOLD%,.0f$RESET      operations %,d      errors %s".format(s.opsPerSecond, s.operations, if (s.errors > 0) "$RED${s.errors}$RESET" else "0"))
        line("checkout wait  p50 %s  p95 %s  p99 %s  max %s".format(formatMillis(s.p50Millis), formatMillis(s.p95Millis), formatMillis(s.p99Millis), formatMillis(s.maxWaitMillis)))
        line()
        line(BOLD + "%-22s %-16s %9s  %6s %6s %6s %7s %7s".format("SERVER", "TYPE", "RTT", "TOTAL", "AVAIL", "IN USE", "PENDING", "WAITERS") + RESET)
        for (row in s.servers) {
            val d = row.description
            val p = row.pool
            val type = d.type.specName
            val colour = when {
                type == "RSPrimary" || type == "Standalone" || type == "Mongos" -> GREEN
                type == "Unknown" -> RED
                else -> ""
            }
            line("%-22s %s%-16s%s %9s  %6s %6s %6s %7s %7s".format(
                d.address.toString(), colour, type, RESET, d.roundTripTimeMillis?.let { formatMillis(it) } ?: "-",
                p?.totalConnections ?: "-", p?.availableConnections ?: "-", p?.inUseConnections ?: "-",
                p?.pendingConnections ?: "-", p?.waitQueueSize ?: "-",
            ))
        }
        line()
        line("${BOLD}Recent events$RESET")
        recent.forEach { line("  $it") }
        if (notice != null) { line(); line("$YELLOW$notice$RESET") }
        append("$ESC[J")
    }

    companion object {
        private const val ESC = "\u001b"
        private const val BOLD = "$ESC[1m"
        private const val DIM = "$ESC[2m"
        private const val RESET = "$ESC[0m"
        private const val RED = "$ESC[31m"
        private const val GREEN = "$ESC[32m"
        private const val YELLOW = "$ESC[33m"
        private val TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault())

        /** `HH:mm:ss.SSS` of an event timestamp. */
        fun time(millis: Long): String = TIME.format(Instant.ofEpochMilli(millis))

        /** True when the live view can be used: a console and a TERM that is set and not `dumb`. */
        fun supported(): Boolean {
            val term = System.getenv("TERM")
            return System.console() != null && !term.isNullOrEmpty() && term != "dumb"
        }
    }
}
