package dev.mooring.bench.mooring

import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.PlatformCallers
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.NotApplicable
import dev.mooring.bench.worker.withOption
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.java.ConnectionPoolListener
import dev.mooring.java.MongoClusters
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * Mooring's Java facade (`mooring-java`) as a Java service calls it: one platform thread per
 * caller, each waiting on the `CompletableFuture` of `JavaMongoCluster.runCommand` (`join()`),
 * as the sync driver's callers wait in `runCommand`. Ping scenarios and the workload tasks
 * ([MooringJavaWorkload], [MooringJavaGridFs], [MooringJavaParallel]).
 */
class MooringJavaDriver : LibraryDriver {
    private val ping = BsonDocument("ping", BsonInt32(1))

    override fun ping(cmd: CellCommand): Map<String, Double> {
        val window = CallerWindow(cmd.callers, cmd.serverPid)
        val listener = object : ConnectionPoolListener {
            override fun connectionCheckedOut(event: ConnectionCheckedOutEvent) = window.checkoutWait(event.duration.inWholeNanoseconds)
            override fun connectionCreated(event: ConnectionCreatedEvent) {
                window.connectionsCreated.incrementAndGet()
            }
        }
        val settings = MongoClusters.settingsBuilder(withOption(cmd.target, "maxPoolSize", cmd.maxPoolSize)).addConnectionPoolListener(listener)
        MongoClusters.create(settings).use { cluster ->
            cluster.runCommand("admin", ping).join() // topology known before callers start
            PlatformCallers.run(window, cmd.callers, "mooring-java-caller", cmd.warmupMs, cmd.measureMs) { i ->
                while (!window.stop) {
                    val t0 = System.nanoTime()
                    cluster.runCommand("admin", ping).join()
                    window.record(i, System.nanoTime() - t0)
                }
            }
        }
        return window.summarize() + ("connectionsCreated" to window.connectionsCreated.get().toDouble())
    }

    override fun workload(cmd: CellCommand): Map<String, Double> {
        val task = WorkloadTask.of(cmd.scenario)
        val ops = when {
            task.isParallel -> MooringJavaParallel(task, cmd.target, ParallelTaskOps.files(task, TaskIterations.operationsOf(cmd, task)), ParallelTaskOps.outDir(task, "mooring-java"))
            task.isGridFs -> MooringJavaGridFs(task, cmd.target)
            else -> MooringJavaWorkload(task, cmd.target, TaskIterations.operationsOf(cmd, task))
        }
        return TaskIterations.measure(cmd, task, ops)
    }

    override fun coldStart(cmd: CellCommand): Map<String, Double> = throw NotApplicable("ping scenarios and workload tasks only (cold start: see mooring)")

    override fun poolOnly(cmd: CellCommand): Map<String, Double> = throw NotApplicable("ping scenarios and workload tasks only (the pool is mooring's)")

    override fun waiters(cmd: CellCommand): Map<String, Double> = throw NotApplicable("ping scenarios and workload tasks only (the pool is mooring's)")

    override fun failover(cmd: CellCommand): Map<String, Double> = throw NotApplicable("ping scenarios and workload tasks only (failover: see mooring)")
}
