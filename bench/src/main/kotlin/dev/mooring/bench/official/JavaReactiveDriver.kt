package dev.mooring.bench.official

import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.ParallelTaskOps
import com.mongodb.connection.ClusterType
import com.mongodb.event.ClusterDescriptionChangedEvent
import com.mongodb.event.ClusterListener
import com.mongodb.reactivestreams.client.MongoClients
import com.mongodb.reactivestreams.client.MongoDatabase
import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.NotApplicable
import org.bson.Document
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * The official reactive-streams driver: each "caller" is a chain that keeps one operation in
 * flight (subscribe, and on completion subscribe again), so N callers = N operations in flight.
 */
class JavaReactiveDriver : LibraryDriver {
    override fun ping(cmd: CellCommand): Map<String, Double> {
        val window = CallerWindow(cmd.callers, cmd.serverPid)
        MongoClients.create(OfficialClients.settings(JavaSyncDriver.withPool(cmd.target, cmd.maxPoolSize), window)).use { client ->
            val db = client.getDatabase("admin")
            val ping = Document("ping", 1)
            once(db, ping).get(30, TimeUnit.SECONDS)
            val finished = CountDownLatch(cmd.callers)
            val error = AtomicReference<Throwable>()
            for (i in 0 until cmd.callers) Chain(i, db, ping, window, finished, error).next()
            Thread.sleep(cmd.warmupMs)
            window.open()
            Thread.sleep(cmd.measureMs)
            window.close()
            window.stop = true
            check(finished.await(60, TimeUnit.SECONDS)) { "reactive chains did not stop" }
            error.get()?.let { throw IllegalStateException("a chain failed: $it", it) }
        }
        return window.summarize() + ("connectionsCreated" to window.connectionsCreated.get().toDouble())
    }

    private class Chain(
        val i: Int,
        val db: MongoDatabase,
        val ping: Document,
        val window: CallerWindow,
        val finished: CountDownLatch,
        val error: AtomicReference<Throwable>,
    ) : Subscriber<Document> {
        private var t0 = 0L

        fun next() {
            if (window.stop) {
                finished.countDown()
                return
            }
            t0 = System.nanoTime()
            db.runCommand(ping).subscribe(this)
        }

        override fun onSubscribe(s: Subscription) = s.request(1)
        override fun onNext(t: Document) = Unit
        override fun onError(t: Throwable) {
            error.compareAndSet(null, t)
            finished.countDown()
        }

        override fun onComplete() {
            window.record(i, System.nanoTime() - t0)
            next()
        }
    }

    private fun once(db: MongoDatabase, cmd: Document): CompletableFuture<Unit> {
        val f = CompletableFuture<Unit>()
        db.runCommand(cmd).subscribe(object : Subscriber<Document> {
            override fun onSubscribe(s: Subscription) = s.request(1)
            override fun onNext(t: Document) = Unit
            override fun onError(t: Throwable) { f.completeExceptionally(t) }
            override fun onComplete() { f.complete(Unit) }
        })
        return f
    }

    /** A workload task through the reactive-streams driver ([ReactiveWorkload]). */
    override fun workload(cmd: CellCommand): Map<String, Double> {
        val task = WorkloadTask.of(cmd.scenario)
        if (task == WorkloadTask.GRIDFS_DOWNLOAD && cmd.server == "mongo-java-server") throw NotApplicable(GRIDFS_DOWNLOAD_MJS)
        val ops = when {
            task.isParallel -> ReactiveParallel(task, cmd.target, ParallelTaskOps.files(task, TaskIterations.operationsOf(cmd, task)), ParallelTaskOps.outDir(task, "java-reactive"))
            task.isGridFs -> ReactiveGridFs(task, cmd.target)
            else -> ReactiveWorkload(task, cmd.target, TaskIterations.operationsOf(cmd, task))
        }
        return TaskIterations.measure(cmd, task, ops)
    }

    override fun coldStart(cmd: CellCommand): Map<String, Double> {
        val t0 = System.nanoTime()
        val known = CountDownLatch(1)
        val topologyNanos = java.util.concurrent.atomic.AtomicLong()
        val settings = com.mongodb.MongoClientSettings.builder(OfficialClients.settings(JavaSyncDriver.withPool(cmd.target, cmd.maxPoolSize), null))
            .applyToClusterSettings {
                it.addClusterListener(object : ClusterListener {
                    override fun clusterDescriptionChanged(event: ClusterDescriptionChangedEvent) {
                        if (event.newDescription.type != ClusterType.UNKNOWN && topologyNanos.compareAndSet(0, System.nanoTime() - t0)) known.countDown()
                    }
                })
            }.build()
        MongoClients.create(settings).use { client ->
            once(client.getDatabase("admin"), Document("ping", 1)).get(30, TimeUnit.SECONDS)
            val firstPing = System.nanoTime() - t0
            check(known.await(30, TimeUnit.SECONDS)) { "topology never became known" }
            return mapOf("coldFirstPingMs" to firstPing / 1e6, "topologyKnownMs" to topologyNanos.get() / 1e6)
        }
    }

    override fun poolOnly(cmd: CellCommand): Map<String, Double> = OfficialPoolBench.asyncPairs(cmd)

    override fun waiters(cmd: CellCommand): Map<String, Double> = OfficialPoolBench.asyncWaiters(cmd)

    override fun failover(cmd: CellCommand): Map<String, Double> = OfficialFailover.run(cmd)

    private companion object {
        /**
         * mongo-java-server sends all 201 chunks of GRIDFS_LARGE (52 MB) in one reply (a server caps a batch at
         * 16 MiB); the driver refuses a reply above the 48 MB `maxMessageSizeBytes`, and its GridFS download publisher
         * has no batch size to ask for less.
         */
        const val GRIDFS_DOWNLOAD_MJS = "mongo-java-server answers the chunks' find with one 52 MB reply (no 16 MiB batch cap), " +
            "above the 48 MB maxMessageSizeBytes the driver enforces, and the reactive GridFS download has no batch size"
    }
}
