package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
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
 * The guard of ConnectionPool.withConnection (docs/architecture.md, "Which thread runs this
 * line"): a check-in resumes the waiters it served on the releasing thread, so a caller's block
 * must never run there. A block that blocks its thread until another caller has checked out a
 * connection completes only if the check-in that served it went on to serve that other caller.
 */
class BlockingBlockGuardSpec : FunSpec({
    test("a withConnection block that blocks its thread never delays another caller's checkout") {
        val threads = Executors.newFixedThreadPool(4) { r -> Thread(r, "guard-caller").apply { isDaemon = true } }
        val dispatcher = threads.asCoroutineDispatcher()
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 2), FakeConnectionFactory())
        val scope = CoroutineScope(SupervisorJob() + dispatcher)
        val otherCheckedOut = CountDownLatch(1)
        val blockSawOther = AtomicReference<Boolean>()
        try {
            pool.ready()
            withContext(dispatcher) {
                val held = List(2) { pool.checkOut() }
                // UNDISPATCHED: each launch has queued its checkout when it returns.
                val blocking = scope.launch(start = CoroutineStart.UNDISPATCHED) {
                    pool.withConnection {
                        // blocks its thread (as a Java caller's join() would) until the other caller has a connection
                        blockSawOther.set(otherCheckedOut.await(20, TimeUnit.SECONDS))
                    }
                }
                val other = scope.launch(start = CoroutineStart.UNDISPATCHED) {
                    val c = pool.checkOut()
                    otherCheckedOut.countDown()
                    pool.checkIn(c)
                }
                withTimeout(20_000) { while (pool.statistics().waitQueueSize != 2) delay(1) }
                // One coroutine, one thread: the first check-in serves the blocking caller (and resumes it
                // here, the same dispatcher), the second serves the other caller, unless the first never returned.
                pool.checkIn(held[0])
                pool.checkIn(held[1])
                withTimeout(30_000) {
                    blocking.join()
                    other.join()
                }
            }
            blockSawOther.get() shouldBe true
            pool.statistics().inUseConnections shouldBe 0
        } finally {
            scope.cancel()
            pool.close()
            threads.shutdownNow()
        }
    }
})
