package dev.mooring.samples.demo

import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.MooringException
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.JsonObject
import java.io.PrintStream
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/**
 * Runs the demo for parsed [args] and returns the process exit code (0, or 1 when the
 * deployment or the cluster could not be started). Never calls `exitProcess`: [main] does.
 *
 * Output: with [interactive] the live [TerminalView] on [out], refreshed 4×/s; otherwise one
 * [StatusLine] per second (on [err] with `--json`, whose event lines own [out]). The [Summary]
 * goes to the same stream as the status. Completing [stop] (Ctrl-C, `q`) ends the run early.
 */
class DemoRunner(
    private val args: DemoArgs,
    private val out: PrintStream,
    private val err: PrintStream,
    private val interactive: Boolean,
    private val stop: CompletableDeferred<Unit>,
) {
    private val stats = DemoStats(RecentEvents(showCommands = args.commandEvents))
    private var rate = RateMeter()
    private val stepDowns = AtomicInteger()
    private val notice = AtomicReference<String?>(null)
    private val status: PrintStream get() = if (args.json) err else out

    /** Runs to the end (duration elapsed or [stop] completed) and prints the summary. */
    fun run(): Int = runBlocking(Dispatchers.Default) {
        val deployment = try {
            startDeployment()
        } catch (e: Exception) {
            err.println("could not start the ${if (args.replicaSet) "replica set" else "embedded server"}: $e")
            return@runBlocking 1
        }
        deployment.use { runWith(it) }
    }

    private suspend fun startDeployment(): Deployment = when {
        args.uri != null -> Deployment.External(args.uri)
        args.replicaSet -> Deployment.ReplicaSet.start()
        else -> Deployment.Embedded.start()
    }

    private suspend fun runWith(deployment: Deployment): Int {
        val jsonLines = if (args.json) Channel<JsonLine>(Channel.UNLIMITED) else null
        val listeners = listOfNotNull<EventListener>(stats, jsonLines?.let { ch -> EventListener { ch.trySend(JsonLine.Event(it)) } })
        val cluster = try {
            var settings = MongoClusterSettings.fromUri(deployment.uri)
            if (args.dns != null) settings = settings.copy(dnsResolver = DnsResolverSettings.of(args.dns))
            MongoCluster(settings, listeners)
        } catch (e: MooringException) {
            err.println("could not create the cluster: ${e.message}")
            return 1
        } catch (e: IllegalArgumentException) {
            err.println("could not create the cluster: ${e.message}")
            return 1
        }
        try {
            if (!awaitServer(cluster) && !stop.isCompleted) {
                status.println("no usable server after ${CONNECT_WAIT_SECONDS}s (topology ${cluster.topology.value.type.specName}); running anyway")
            }
            stats.startClock()
            rate = RateMeter()
            coroutineScope {
                val printer = jsonLines?.let { ch -> launch { for (line in ch) out.println(line.json()) } }
                val workload = Workload(cluster, args.callers, stats).start(this)
                val changes = ChangeWatch(cluster, stats.recent, this) { change -> jsonLines?.trySend(JsonLine.Change(change, System.currentTimeMillis())) }
                watch = changes
                if (args.watch) changes.toggle()
                val keys = if (interactive) KeyReader.start { onKey(it, deployment) } else null
                val stepper = (deployment as? Deployment.ReplicaSet)?.let { rs -> args.stepdownEverySeconds?.let { s -> launch { stepDownEvery(rs, s) } } }
                try {
                    if (interactive) liveView(cluster, deployment) else statusLines(cluster)
                } finally {
                    keys?.close()
                }
                stepper?.cancel()
                changes.stop()
                workload.cancel()
                workload.join()
                val last = DemoSnapshot.take(cluster, stats, rate)
                cluster.closeSuspending()
                jsonLines?.close()
                printer?.join()
                val watched = changes.events.get().takeIf { args.watch || it > 0 }
                status.print(Summary.format(last, stats, stepDowns.get(), watched))
                status.flush()
            }
        } finally {
            cluster.closeSuspending()
        }
        return 0
    }

    /** Waits (at most [CONNECT_WAIT_SECONDS]) until a data-bearing server is known; false on timeout or [stop]. */
    private suspend fun awaitServer(cluster: MongoCluster): Boolean = withTimeoutOrNull(CONNECT_WAIT_SECONDS * 1_000L) {
        coroutineScope {
            val ready = async { cluster.topology.first { t -> t.servers.values.any { it.type.isDataBearing } }; true }
            val stopped = async { stop.await(); false }
            select { ready.onAwait { it }; stopped.onAwait { it } }.also { ready.cancel(); stopped.cancel() }
        }
    } ?: false

    private fun onKey(key: Char, deployment: Deployment) {
        when (key) {
            'q', 'Q' -> stop.complete(Unit)
            'c', 'C' -> notice.set("command events " + if (stats.recent.toggleCommands()) "shown" else "hidden")
            'w', 'W' -> when {
                deployment is Deployment.Embedded -> notice.set(ChangeWatch.NEEDS_REPLICA_SET)
                else -> watch?.let { notice.set("change stream on ${ChangeWatch.NAMESPACE} " + if (it.toggle()) "on" else "off") }
            }
            's', 'S' -> if (deployment is Deployment.ReplicaSet) stepDownRequests.trySend(Unit) else notice.set("step-down needs --replica-set")
        }
    }

    private val stepDownRequests = Channel<Unit>(Channel.CONFLATED)

    /** The run's change stream, once the run has started (the key reader's `w` toggles it). */
    @Volatile
    private var watch: ChangeWatch? = null

    private suspend fun stepDownEvery(rs: Deployment.ReplicaSet, seconds: Int) {
        while (true) {
            delay(seconds * 1_000L)
            stepDown(rs)
        }
    }

    private suspend fun stepDown(rs: Deployment.ReplicaSet) {
        notice.set("stepping the primary down...")
        val what = rs.stepDown()
        stepDowns.incrementAndGet()
        notice.set("step-down #${stepDowns.get()}: $what")
        if (!interactive) status.println("step-down #${stepDowns.get()}: $what")
    }

    /** Waits [periodMillis], or less when the run ends first; false when the run is over (`--seconds` reached or [stop]). */
    private suspend fun waitTick(periodMillis: Long): Boolean {
        val remaining = args.seconds?.let { it * 1_000L - (stats.elapsedSeconds * 1_000).toLong() }
        if (remaining != null && remaining <= 0) return false
        val wait = if (remaining == null) periodMillis else minOf(periodMillis, remaining)
        return withTimeoutOrNull(wait) { stop.await() } == null
    }

    private suspend fun statusLines(cluster: MongoCluster) {
        while (waitTick(1_000)) {
            status.println(StatusLine.format(DemoSnapshot.take(cluster, stats, rate)))
        }
    }

    private suspend fun liveView(cluster: MongoCluster, deployment: Deployment) = coroutineScope {
        val hint = buildString {
            append("q or Ctrl-C: quit   c: command events on/off")
            if (deployment !is Deployment.Embedded) append("   w: change stream on/off")
            if (deployment is Deployment.ReplicaSet) append("   s: step the primary down")
            args.seconds?.let { append("   stops after ${it}s") }
        }
        val stepper = (deployment as? Deployment.ReplicaSet)?.let { rs -> launch { for (r in stepDownRequests) stepDown(rs) } }
        val view = TerminalView(deployment.label + "   callers ${args.callers}", hint)
        out.print(view.enter())
        try {
            while (isActive) {
                val snapshot = DemoSnapshot.take(cluster, stats, rate)
                val recent = stats.recent.lines().map { "${TerminalView.time(it.timestampMillis)}  ${it.text}" }
                out.print(view.frame(snapshot, recent, notice.get()))
                out.flush()
                if (!waitTick(250)) break
            }
        } finally {
            out.print(view.leave())
            out.flush()
            stepper?.cancel()
        }
    }
}

private const val CONNECT_WAIT_SECONDS = 30

/** What a `--json` line is made of, turned into JSON on the printer's coroutine (not inside the event publisher). */
private sealed interface JsonLine {
    fun json(): JsonObject

    class Event(private val event: MooringEvent) : JsonLine {
        override fun json(): JsonObject = EventJson.of(event)
    }

    class Change(private val change: ChangeStreamDocument<*>, private val receivedMillis: Long) : JsonLine {
        override fun json(): JsonObject = EventJson.ofChange(change, receivedMillis)
    }
}

/** Parses [argv] and runs the demo; returns the exit code (2 for a bad command line). */
fun runDemo(
    argv: Array<String>,
    out: PrintStream = System.out,
    err: PrintStream = System.err,
    interactive: Boolean = TerminalView.supported(),
    stop: CompletableDeferred<Unit> = CompletableDeferred(),
): Int {
    val args = try {
        DemoArgs.parse(argv)
    } catch (e: DemoArgsException) {
        err.println("demo: ${e.message}")
        err.println(e.usage)
        return 2
    }
    if (args.help) {
        out.println(DemoArgs.USAGE)
        return 0
    }
    return DemoRunner(args, out, err, interactive && !args.json, stop).run()
}
