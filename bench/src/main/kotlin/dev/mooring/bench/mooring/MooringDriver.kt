package dev.mooring.bench.mooring

import dev.mooring.bench.worker.NotApplicable
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.DrainOrder
import dev.mooring.bench.measure.ResourceMeter
import dev.mooring.bench.measure.count
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.withOption
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.events.EventListener
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.TopologyType
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * Mooring. In the ping scenarios the callers are coroutines on the cluster's event loops
 * ([MongoCluster.dispatcher]) with [callersOnEventLoops], else on [Dispatchers.Default]; the
 * pool-only and waiter scenarios run on [Dispatchers.Default] either way. [eventLoopThreads]:
 * the cluster's `ConnectionSettings.eventLoopThreads` in the ping scenarios, null for the default.
 */
class MooringDriver(private val callersOnEventLoops: Boolean, private val eventLoopThreads: Int? = null) : LibraryDriver {
    private val ping = BsonDocument("ping", BsonInt32(1))

    override fun ping(cmd: CellCommand): Map<String, Double> {
        val window = CallerWindow(cmd.callers, cmd.serverPid)
        // a pool listener, as the sync driver's ConnectionPoolListener: command events are not built for it
        val listener = EventListener.of(ConnectionPoolEvent::class.java) { e ->
            when (e) {
                is ConnectionCheckedOutEvent -> window.checkoutWait(e.duration.inWholeNanoseconds)
                is ConnectionCreatedEvent -> window.connectionsCreated.incrementAndGet()
                else -> Unit
            }
        }
        val settings = MongoClusterSettings.fromUri(withOption(cmd.target, "maxPoolSize", cmd.maxPoolSize)).let { s ->
            if (eventLoopThreads == null) s else s.copy(connection = s.connection.copy(eventLoopThreads = eventLoopThreads))
        }
        val cluster = MongoCluster(settings, listOf(listener))
        val callerDispatcher = if (callersOnEventLoops) cluster.dispatcher else Dispatchers.Default
        val scope = CoroutineScope(SupervisorJob() + callerDispatcher)
        val error = AtomicReference<Throwable>()
        try {
            runBlocking { cluster.runCommand("admin", ping) }
            val jobs = (0 until cmd.callers).map { i ->
                scope.launch {
                    try {
                        while (!window.stop) {
                            val t0 = System.nanoTime()
                            cluster.runCommand("admin", ping)
                            window.record(i, System.nanoTime() - t0)
                        }
                    } catch (t: Throwable) {
                        error.compareAndSet(null, t)
                    }
                }
            }
            Thread.sleep(cmd.warmupMs)
            window.open()
            Thread.sleep(cmd.measureMs)
            window.close()
            window.stop = true
            runBlocking { jobs.joinAll() }
        } finally {
            scope.cancel()
            runBlocking { cluster.closeSuspending() }
        }
        error.get()?.let { throw IllegalStateException("a caller failed: $it", it) }
        return window.summarize() + ("connectionsCreated" to window.connectionsCreated.get().toDouble())
    }

    /** A workload task through Mooring's collection API ([MooringWorkload]; the ODM tasks: [MooringOdm]; the parallel ones: [MooringParallel]). */
    override fun workload(cmd: CellCommand): Map<String, Double> {
        if (!callersOnEventLoops || eventLoopThreads != null) throw NotApplicable("the workload tasks run on the defaults (library mooring)")
        val task = WorkloadTask.of(cmd.scenario)
        val ops = when {
            task.isParallel -> MooringParallel(task, cmd.target, ParallelTaskOps.files(task, TaskIterations.operationsOf(cmd, task)), ParallelTaskOps.outDir(task, "mooring"))
            task.isGridFs -> MooringGridFs(task, cmd.target)
            task.isOdm -> MooringOdm(task, cmd.target, TaskIterations.operationsOf(cmd, task))
            else -> MooringWorkload(task, cmd.target, TaskIterations.operationsOf(cmd, task))
        }
        return TaskIterations.measure(cmd, task, ops)
    }

    override fun coldStart(cmd: CellCommand): Map<String, Double> = runBlocking(Dispatchers.Default) {
        val t0 = System.nanoTime()
        val cluster = MongoCluster(withOption(cmd.target, "maxPoolSize", cmd.maxPoolSize))
        try {
            val known = async { cluster.topology.first { it.type != TopologyType.UNKNOWN }; System.nanoTime() - t0 }
            withTimeout(30_000) { cluster.runCommand("admin", ping) }
            val firstPing = System.nanoTime() - t0
            val topologyKnown = withTimeout(30_000) { known.await() }
            mapOf("coldFirstPingMs" to firstPing / 1e6, "topologyKnownMs" to topologyKnown / 1e6)
        } finally {
            cluster.closeSuspending()
        }
    }

    override fun poolOnly(cmd: CellCommand): Map<String, Double> {
        val factory = BenchFakeConnectionFactory()
        val window = CallerWindow(cmd.callers)
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        val pool = ConnectionPool(ADDRESS, ConnectionPoolSettings(maxPoolSize = cmd.maxPoolSize), factory, context = Dispatchers.Default)
        val error = AtomicReference<Throwable>()
        try {
            runBlocking { pool.ready() }
            val jobs = (0 until cmd.callers).map { i ->
                scope.launch {
                    try {
                        while (!window.stop) {
                            val c = pool.checkOut()
                            pool.checkIn(c)
                            window.count(i)
                        }
                    } catch (t: Throwable) {
                        error.compareAndSet(null, t)
                    }
                }
            }
            Thread.sleep(cmd.warmupMs)
            window.open()
            Thread.sleep(cmd.measureMs)
            window.close()
            window.stop = true
            runBlocking { jobs.joinAll() }
        } finally {
            scope.cancel()
            runBlocking { pool.close() }
        }
        error.get()?.let { throw IllegalStateException("a pool caller failed: $it", it) }
        val m = window.summarize(withLatency = false, withWait = false)
        m["connectionsCreated"] = factory.created.get().toDouble()
        if (cmd.callers == 1) m["pairNs"] = 1e9 / m.getValue("opsPerSec")
        return m
    }

    override fun waiters(cmd: CellCommand): Map<String, Double> {
        val n = cmd.count
        val factory = BenchFakeConnectionFactory()
        val pool = ConnectionPool(ADDRESS, ConnectionPoolSettings(maxPoolSize = cmd.maxPoolSize), factory, context = Dispatchers.Default)
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        val meter = ResourceMeter()
        val order = DrainOrder(n)
        val done = CountDownLatch(n)
        val error = AtomicReference<Throwable>()
        try {
            val held: List<Connection> = runBlocking {
                pool.ready()
                (0 until cmd.maxPoolSize).map { pool.checkOut() }
            }
            val before = meter.settledHeapBytes()
            // UNDISPATCHED: each checkout runs on this thread until it suspends in the wait queue,
            // so waiter i is the i-th in the queue.
            for (i in 0 until n) {
                scope.launch(start = CoroutineStart.UNDISPATCHED) {
                    try {
                        val c = pool.checkOut()
                        order.served(i)
                        pool.checkIn(c)
                    } catch (t: Throwable) {
                        error.compareAndSet(null, t)
                    } finally {
                        done.countDown()
                    }
                }
            }
            val queued = pool.statisticsSnapshot().waitQueueSize
            check(queued == n) { "expected $n queued checkouts, found $queued" }
            val heap = meter.settledHeapBytes() - before
            val t0 = System.nanoTime()
            runBlocking { held.forEach { pool.checkIn(it) } }
            check(done.await(10, TimeUnit.MINUTES)) { "waiters did not drain" }
            val drainNanos = System.nanoTime() - t0
            error.get()?.let { throw IllegalStateException("a waiter failed: $it", it) }
            return linkedMapOf(
                "heapMb" to heap / 1048576.0,
                "drainMs" to drainNanos / 1e6,
                "fifoMaxDisplacement" to order.maxDisplacement().toDouble(),
                "waiters" to n.toDouble(),
                "connectionsCreated" to factory.created.get().toDouble(),
            )
        } finally {
            scope.cancel()
            runBlocking { pool.close() }
        }
    }

    override fun failover(cmd: CellCommand): Map<String, Double> = MooringFailover.run(cmd)

    private companion object {
        val ADDRESS = ServerAddress("127.0.0.1", 27017)
    }
}
