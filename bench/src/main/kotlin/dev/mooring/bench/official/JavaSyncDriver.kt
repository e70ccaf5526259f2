package dev.mooring.bench.official

import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.ParallelTaskOps
import com.mongodb.client.MongoClients
import com.mongodb.event.ClusterDescriptionChangedEvent
import com.mongodb.event.ClusterListener
import com.mongodb.connection.ClusterType
import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.PlatformCallers
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.NotApplicable
import org.bson.Document
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** The official sync driver: one platform thread per caller. */
class JavaSyncDriver : LibraryDriver {
    override fun ping(cmd: CellCommand): Map<String, Double> {
        val window = CallerWindow(cmd.callers, cmd.serverPid)
        MongoClients.create(OfficialClients.settings(withPool(cmd.target, cmd.maxPoolSize), window)).use { client ->
            val db = client.getDatabase("admin")
            val ping = Document("ping", 1)
            db.runCommand(ping) // topology known before callers start
            PlatformCallers.run(window, cmd.callers, "sync-caller", cmd.warmupMs, cmd.measureMs) { i ->
                while (!window.stop) {
                    val t0 = System.nanoTime()
                    db.runCommand(ping)
                    window.record(i, System.nanoTime() - t0)
                }
            }
        }
        return window.summarize() + ("connectionsCreated" to window.connectionsCreated.get().toDouble())
    }

    /** A workload task through the sync driver ([SyncWorkload]). */
    override fun workload(cmd: CellCommand): Map<String, Double> {
        val task = WorkloadTask.of(cmd.scenario)
        val ops = when {
            task.isParallel -> SyncParallel(task, cmd.target, ParallelTaskOps.files(task, TaskIterations.operationsOf(cmd, task)), ParallelTaskOps.outDir(task, "java-sync"))
            task.isGridFs -> SyncGridFs(task, cmd.target)
            else -> SyncWorkload(task, cmd.target, TaskIterations.operationsOf(cmd, task))
        }
        return TaskIterations.measure(cmd, task, ops)
    }

    override fun coldStart(cmd: CellCommand): Map<String, Double> {
        val t0 = System.nanoTime()
        val known = CountDownLatch(1)
        var topologyNanos = 0L
        val settings = OfficialClients.settings(withPool(cmd.target, cmd.maxPoolSize), null).let { s ->
            com.mongodb.MongoClientSettings.builder(s).applyToClusterSettings {
                it.addClusterListener(object : ClusterListener {
                    override fun clusterDescriptionChanged(event: ClusterDescriptionChangedEvent) {
                        val d = event.newDescription
                        if (d.type != ClusterType.UNKNOWN && known.count > 0) {
                            topologyNanos = System.nanoTime() - t0
                            known.countDown()
                        }
                    }
                })
            }.build()
        }
        MongoClients.create(settings).use { client ->
            client.getDatabase("admin").runCommand(Document("ping", 1))
            val firstPing = System.nanoTime() - t0
            check(known.await(30, TimeUnit.SECONDS)) { "topology never became known" }
            return mapOf("coldFirstPingMs" to firstPing / 1e6, "topologyKnownMs" to topologyNanos / 1e6)
        }
    }

    override fun poolOnly(cmd: CellCommand): Map<String, Double> = OfficialPoolBench.syncPairs(cmd)

    override fun waiters(cmd: CellCommand): Map<String, Double> =
        throw NotApplicable("the sync API needs one blocked platform thread per waiting checkout; see java-reactive (getAsync) for the official pool")

    override fun failover(cmd: CellCommand): Map<String, Double> = OfficialFailover.run(cmd)

    companion object {
        internal fun withPool(uri: String, maxPoolSize: Int): String = dev.mooring.bench.worker.withOption(uri, "maxPoolSize", maxPoolSize)
    }
}
