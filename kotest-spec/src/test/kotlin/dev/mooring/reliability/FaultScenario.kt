package dev.mooring.reliability

import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.events.MooringException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.EventRecorder
import io.kotest.assertions.withClue
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import java.io.File
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.debug.DebugProbes
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** What one fault run observed; [line] is its row in target/reliability-report.md. */
data class FaultReport(
    val backend: String,
    val fault: String,
    val operations: Int,
    val succeeded: Int,
    val errorsByType: Map<String, Int>,
    val slowestOperationMillis: Long,
    val recoveryMillis: Long,
    val fdsBefore: Int,
    val fdsAfter: Int,
    val socketsBefore: Int,
    val socketsAfter: Int,
    val libraryCoroutinesDuring: Int,
    val libraryCoroutinesAfter: Int,
    val retriesAfterRecovery: Int,
) {
    fun line(): String =
        "| $backend | $fault | $operations | $succeeded | ${errorsByType.entries.joinToString(", ") { "${it.key} ${it.value}" }.ifEmpty { "-" }} | " +
            "$slowestOperationMillis | $recoveryMillis | $retriesAfterRecovery | $fdsBefore -> $fdsAfter | $socketsBefore -> $socketsAfter | $libraryCoroutinesDuring -> $libraryCoroutinesAfter |"
}

/** The fault-injection recipe: how to inject the fault and how to lift it. */
class FaultRecipe(val name: String, val inject: suspend () -> Unit, val lift: suspend () -> Unit)

/** Every operation must end (result or typed error) within this bound. */
val OPERATION_BOUND: Duration = 20.seconds

private val ids = AtomicInteger()

/** `{insert: "c", documents: [{_id: n}]}` with a process-unique n: runs on the primary only. */
fun insertOne(): BsonDocument =
    BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(ids.incrementAndGet())))))

/**
 * Runs one fault scenario against a deployment reached through [settings]:
 *  1. counts descriptors; opens a client; waits until an operation succeeds;
 *  2. injects the fault; runs [concurrency] concurrent inserts, each of which must end with a
 *     result or a typed [MooringException] within [OPERATION_BOUND];
 *  3. checks the pools: nothing in use or waiting, no more than maxPoolSize connections;
 *  4. lifts the fault; measures the time until an operation succeeds again (same client);
 *     then [concurrency] concurrent inserts must all succeed;
 *  5. closes the client: no library coroutine is left, every connection created was closed,
 *     and the socket descriptor count returns to where it was (plus [serverDescriptorAllowance]
 *     for a scenario that restarts a test-kit server: its new listening socket); the total
 *     descriptor count is reported.
 */
suspend fun runFaultScenario(
    backend: String,
    settings: MongoClusterSettings,
    fault: FaultRecipe,
    concurrency: Int = 256,
    serverDescriptorAllowance: Int = 0,
): FaultReport {
    val fdsBefore = openFileDescriptors()
    val socketsBefore = openSocketDescriptors()
    val fdTargetsBefore = fileDescriptorTargets()
    val coroutinesBefore = libraryCoroutines()
    withClue("library coroutines alive before the client opened") { coroutinesBefore.shouldBeEmpty() }
    val recorder = EventRecorder()
    val cluster = MongoCluster(settings, listOf(recorder))
    var closed = false
    try {
        awaitSuccess(cluster, 20.seconds)

        fault.inject()
        val outcomes = runConcurrently(cluster, concurrency)
        val unbounded = outcomes.filter { it.error == UNBOUNDED }
        withClue("operations that did not end within $OPERATION_BOUND") { unbounded.size shouldBe 0 }
        val untyped = outcomes.mapNotNull { it.untyped }
        withClue("operations that ended with an untyped error: ${untyped.take(3).map { it.stackTraceToString() }}") { untyped.size shouldBe 0 }
        val during = libraryCoroutines().size
        awaitQuietPools(cluster, settings)

        val liftedAt = System.nanoTime()
        fault.lift()
        awaitSuccess(cluster, 30.seconds)
        val recoveryMillis = (System.nanoTime() - liftedAt) / 1_000_000
        // on 2 shared cores a 500 ms socketTimeoutMS can still fire under 256 new operations:
        // each operation may retry (as an application would), and must succeed within 3 attempts
        val after = runConcurrently(cluster, concurrency, attempts = 3)
        withClue("after recovery every operation succeeds: ${after.filter { it.error != null }.groupingBy { it.error }.eachCount()}") {
            after.count { it.error == null } shouldBe concurrency
        }
        val retriedAfterRecovery = after.sumOf { it.attempts - 1 }
        awaitQuietPools(cluster, settings)

        cluster.closeSuspending()
        closed = true
        ClusterInternals.rootJob(cluster).children.toList().shouldBeEmpty()
        val left = libraryCoroutines()
        withClue("library coroutines alive after close(): $left") { left.shouldBeEmpty() }
        val created = recorder.ofType<ConnectionCreatedEvent>().size
        withClue("every connection created was closed") { recorder.ofType<ConnectionClosedEvent>().size shouldBe created }
        // Sockets are the client's resource and must all be released (a restarted test-kit server re-binds its
        // listener: [serverDescriptorAllowance]). The total count is reported: it also holds JVM-internal epoll/eventfd
        // pairs that NIO selectors of the test kit and dispatcher threads cache, which are not the client's.
        val socketsAfter = awaitSocketDescriptorsAtMost(socketsBefore + serverDescriptorAllowance)
        val fdsAfter = awaitFileDescriptorsAtMost(fdsBefore + serverDescriptorAllowance, bound = 2.seconds)
        if (socketsAfter > socketsBefore + serverDescriptorAllowance) {
            val added = fileDescriptorTargets().filter { (fd, target) -> fdTargetsBefore[fd] != target }
            val sockets = added.values.filter { it.startsWith("socket:[") }.map { it.removePrefix("socket:[").removeSuffix("]") }.toSet()
            withClue("socket descriptors before $socketsBefore, after $socketsAfter; new: $added; tcp: ${tcpEndpoints(sockets)}") {
                socketsAfter shouldBeLessThanOrEqual socketsBefore + serverDescriptorAllowance
            }
        }

        val report = FaultReport(
            backend, fault.name, concurrency, outcomes.count { it.error == null },
            outcomes.mapNotNull { it.error }.groupingBy { it }.eachCount().toSortedMap(),
            outcomes.maxOf { it.millis }, recoveryMillis, fdsBefore, fdsAfter, socketsBefore, socketsAfter, during, left.size, retriedAfterRecovery,
        )
        record(report)
        return report
    } finally {
        if (!closed) cluster.closeSuspending()
    }
}

private class Outcome(val millis: Long, val error: String?, val untyped: Throwable? = null, val attempts: Int = 1)

private const val UNBOUNDED = "did not end within the bound"

private suspend fun runConcurrently(cluster: MongoCluster, n: Int, attempts: Int = 1): List<Outcome> = coroutineScope {
    (1..n).map {
        async {
            var outcome: Outcome
            var attempt = 0
            do {
                attempt++
                outcome = runOnce(cluster, attempt)
            } while (outcome.error != null && outcome.untyped == null && outcome.error != UNBOUNDED && attempt < attempts)
            outcome
        }
    }.awaitAll()
}

private suspend fun runOnce(cluster: MongoCluster, attempt: Int): Outcome {
    val start = System.nanoTime()
    fun ms() = (System.nanoTime() - start) / 1_000_000
    return try {
        withTimeout(OPERATION_BOUND) { cluster.runCommand("test", insertOne()) }
        Outcome(ms(), null, attempts = attempt)
    } catch (e: TimeoutCancellationException) {
        Outcome(ms(), UNBOUNDED, attempts = attempt)
    } catch (e: CancellationException) {
        throw e
    } catch (e: MooringException) {
        Outcome(ms(), e.javaClass.simpleName, attempts = attempt)
    } catch (t: Throwable) {
        Outcome(ms(), "untyped ${t.javaClass.name}", t, attempt)
    }
}

/** Retries one insert until it succeeds (bounded); the client is never restarted. */
private suspend fun awaitSuccess(cluster: MongoCluster, bound: Duration) {
    var last: Throwable? = null
    val ok = withTimeoutOrNull(bound) {
        while (true) {
            try {
                withTimeout(5.seconds) { cluster.runCommand("test", insertOne()) }
                return@withTimeoutOrNull true
            } catch (e: TimeoutCancellationException) {
                last = e
            } catch (e: MooringException) {
                last = e
            }
            delay(25.milliseconds)
        }
        @Suppress("UNREACHABLE_CODE")
        false
    }
    if (ok != true) {
        val dump = File("target/reliability-stuck-${System.currentTimeMillis()}.txt")
        dump.parentFile?.mkdirs()
        dump.writeText("topology: ${cluster.topology.value}\npools: ${cluster.poolStatistics()}\n\n")
        if (DebugProbes.isInstalled) java.io.PrintStream(java.io.FileOutputStream(dump, true)).use { DebugProbes.dumpCoroutines(it) }
    }
    withClue("no operation succeeded within $bound; last error: $last; topology ${cluster.topology.value}; pools ${cluster.poolStatistics()}") { ok shouldBe true }
}

/** Waits (bounded) until no pool has a connection in use or a waiter, then checks the counts. */
private suspend fun awaitQuietPools(cluster: MongoCluster, settings: MongoClusterSettings) {
    withTimeoutOrNull(15.seconds) {
        while (cluster.poolStatistics().values.any { it.inUseConnections != 0 || it.waitQueueSize != 0 || it.pendingConnections != 0 }) delay(20)
    }
    for ((address, s) in cluster.poolStatistics()) {
        withClue("pool of $address: $s") {
            s.inUseConnections shouldBe 0
            s.waitQueueSize shouldBe 0
            s.pendingConnections shouldBe 0
            s.totalConnections shouldBe s.availableConnections
            s.totalConnections shouldBeLessThanOrEqual settings.pool.maxPoolSize
        }
    }
}

private val reportFile = File("target/reliability-report.md")

/** Starts a fresh target/reliability-report.md (each spec run rewrites it). */
@Synchronized
fun resetFaultReport() {
    reportFile.delete()
}

@Synchronized
private fun record(r: FaultReport) {
    if (!reportFile.exists()) {
        reportFile.parentFile?.mkdirs()
        reportFile.writeText(
            "| backend | fault | ops | succeeded | errors by type | slowest op ms | recovery ms | retries after recovery | fds before -> after | socket fds before -> after | library coroutines during -> after close |\n" +
                "|---|---|---|---|---|---|---|---|---|---|---|\n",
        )
    }
    reportFile.appendText(r.line() + "\n")
    println("fault report: ${r.line()}")
}
