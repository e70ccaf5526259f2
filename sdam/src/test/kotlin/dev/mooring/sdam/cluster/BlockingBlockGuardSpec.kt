package dev.mooring.sdam.cluster

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.WireServer
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * The guard of MongoCluster.withConnection (docs/architecture.md, "Which thread runs this line"):
 * a check-in resumes the checkouts it served on the releasing thread, so a caller's block never
 * runs there. One coroutine holds both connections of the pool and gives them back one after the
 * other on its thread: the first serves a caller whose block blocks its thread until the second
 * has served another caller.
 */
class BlockingBlockGuardSpec : FunSpec({
    test("a withConnection block that blocks its thread never delays another caller's checkout") {
        val server = WireServer.start()
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?maxPoolSize=2"))
        val threads = Executors.newFixedThreadPool(4) { r -> Thread(r, "guard-caller").apply { isDaemon = true } }
        val dispatcher = threads.asCoroutineDispatcher()
        val scope = CoroutineScope(SupervisorJob() + dispatcher)
        val otherCheckedOut = CountDownLatch(1)
        val blockSawOther = AtomicReference<Boolean>()
        try {
            cluster.runCommand("admin", ping()) // discovered, pool ready
            withContext(dispatcher) {
                val holding = CompletableDeferred<Unit>()
                val release = CompletableDeferred<Unit>()
                val holder = scope.launch {
                    cluster.withConnection { _ -> cluster.withConnection { _ -> holding.complete(Unit); release.await() } }
                }
                withTimeout(20_000) { holding.await() }
                val blocking = scope.launch {
                    cluster.withConnection { _ -> blockSawOther.set(otherCheckedOut.await(20, TimeUnit.SECONDS)) }
                }
                fun queued() = cluster.poolStatistics().getValue(server.address).waitQueueSize
                withTimeout(20_000) { while (queued() != 1) delay(1) }
                val other = scope.launch { cluster.withConnection { _ -> otherCheckedOut.countDown() } }
                withTimeout(20_000) { while (queued() != 2) delay(1) }
                release.complete(Unit)
                withTimeout(30_000) {
                    holder.join()
                    blocking.join()
                    other.join()
                }
            }
            blockSawOther.get() shouldBe true
        } finally {
            scope.cancel()
            cluster.closeSuspending()
            threads.shutdownNow()
            server.close()
        }
    }
})
