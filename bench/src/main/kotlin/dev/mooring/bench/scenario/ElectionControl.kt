package dev.mooring.bench.scenario

import java.io.BufferedReader
import java.io.InputStreamReader
import java.io.PrintWriter
import java.net.Socket
import java.time.Instant

/** Wall-clock microseconds (comparable across JVMs on one machine). */
fun epochMicros(): Long {
    val now = Instant.now()
    return now.epochSecond * 1_000_000 + now.nano / 1_000
}

/** What [FailoverRun] needs from the replica set: its primary, and elections on demand. */
interface Elections {
    /** The current primary's `host:port`. */
    fun primary(): String

    /** Elects a secondary; returns (the new primary's `host:port`, when the election happened in µs). */
    fun elect(): Pair<String, Long>
}

/**
 * The client side of the replica-set server JVM's control port: asks it to elect a new
 * primary and learns which member won and when (wall-clock µs). Not thread-safe.
 */
class ElectionControl(hostPort: String) : Elections, AutoCloseable {
    private val socket = Socket(hostPort.substringBefore(':'), hostPort.substringAfter(':').toInt())
    private val input = BufferedReader(InputStreamReader(socket.getInputStream(), Charsets.UTF_8))
    private val output = PrintWriter(socket.getOutputStream(), true)

    /** The `mongodb://` seed URI of the set (ends with options, so more may be appended with `&`). */
    fun seedUri(): String = request("uri").removePrefix("URI ")

    override fun elect(): Pair<String, Long> {
        val parts = request("elect").split(' ')
        check(parts.size == 3 && parts[0] == "ELECTED") { "unexpected control reply: $parts" }
        return parts[1] to parts[2].toLong()
    }

    override fun primary(): String = request("primary").removePrefix("PRIMARY ")

    private fun request(line: String): String {
        output.println(line)
        val reply = input.readLine() ?: throw IllegalStateException("the replica-set server closed the control connection")
        if (reply.startsWith("ERROR")) throw IllegalStateException("replica-set server: $reply")
        return reply
    }

    override fun close() = socket.close()
}

/**
 * Runs [count] elections and measures, for each, the time from the election to the moment the
 * client reports the new primary. [awaitPrimary] blocks until the client's topology shows
 * `host:port` as primary and returns that moment in wall-clock µs.
 *
 * Every election, the first included, comes after [settle] (by default [SETTLE_MS]) following
 * the moment the client last saw a primary. The first one matters most: when the client first
 * sees the initial primary, its monitors of the other members have only just started their
 * handshakes (discovery is still in progress), so an election at that moment would measure
 * discovery, not failover detection. Each detection time is also written to stderr (the
 * worker's log under `bench-logs/`), one line per election.
 */
object FailoverRun {
    /** The pause before each election, so every member's monitor is streaming again. */
    const val SETTLE_MS: Long = 200

    fun measure(
        control: Elections,
        count: Int,
        settle: () -> Unit = { Thread.sleep(SETTLE_MS) },
        awaitPrimary: (String) -> Long,
    ): Map<String, Double> {
        require(count >= 1) { "count must be >= 1, was $count" }
        awaitPrimary(control.primary())
        settle()
        val detections = ArrayList<Double>()
        repeat(count) { i ->
            val (host, electedAt) = control.elect()
            val seenAt = awaitPrimary(host)
            val ms = (seenAt - electedAt) / 1e3
            detections += ms
            System.err.printf("failover election %d/%d: %s seen as primary after %.3f ms%n", i + 1, count, host, ms)
            settle()
        }
        val sorted = detections.sorted()
        return linkedMapOf(
            "detectMsP50" to dev.mooring.bench.report.Aggregation.median(sorted),
            "detectMsMax" to sorted.last(),
            "elections" to count.toDouble(),
        )
    }
}
