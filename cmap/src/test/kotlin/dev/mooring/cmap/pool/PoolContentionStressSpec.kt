package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.internal.pool.DefaultConnectionPool
import dev.mooring.events.EventBus
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.newFixedThreadPoolContext
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random

/**
 * The pool's lock under real contention, on real threads (the Lincheck model check runs with the
 * production lock hand-off off, see PoolLincheckSpec): many coroutines check out and in while
 * another clears and readies the pool and some checkouts are cancelled. Every checkout must end
 * (a lost wake-up would hang it and fail the timeout), no connection may be held by two callers
 * at once, and the pool's counts must balance at the end.
 */
@OptIn(ExperimentalCoroutinesApi::class, kotlinx.coroutines.DelicateCoroutinesApi::class)
class PoolContentionStressSpec : FunSpec({
    val threads = newFixedThreadPoolContext(4, "pool-stress")
    afterSpec { threads.close() }

    suspend fun stress(dispatcher: CoroutineDispatcher, poolContext: CoroutineDispatcher, seed: Int) = withContext(dispatcher) {
        val factory = FakeConnectionFactory()
        val pool = DefaultConnectionPool(
            TEST_ADDRESS,
            ConnectionPoolSettings(maxPoolSize = 3, maxConnecting = 2, maintenanceIntervalMS = -1),
            factory, EventBus(), context = poolContext,
        )
        pool.ready()
        val held = ConcurrentHashMap.newKeySet<Long>()
        val served = AtomicInteger()
        val cleared = AtomicInteger()
        val workers = (0 until 48).map { w ->
            launch {
                val rnd = Random(seed * 1000 + w)
                repeat(1_000) {
                    try {
                        val attempt = suspend {
                            val c = pool.checkOut()
                            check(held.add(c.id)) { "connection ${c.id} handed to two callers" }
                            try {
                                if (rnd.nextInt(4) == 0) yield()
                                served.incrementAndGet()
                            } finally {
                                held.remove(c.id)
                                pool.checkIn(c)
                            }
                        }
                        if (rnd.nextInt(10) == 0) withTimeoutOrNull(rnd.nextLong(0, 2)) { attempt() } else attempt()
                    } catch (e: PoolClearedException) {
                        cleared.incrementAndGet()
                    }
                }
            }
        }
        val chaos = launch {
            val rnd = Random(seed)
            while (true) {
                delay(rnd.nextLong(1, 5))
                pool.clear(interruptInUseConnections = rnd.nextBoolean())
                delay(rnd.nextLong(0, 2))
                pool.ready()
            }
        }
        withTimeout(60_000) { workers.joinAll() }
        chaos.cancel()
        pool.ready()
        val s = pool.statistics()
        s.inUseConnections shouldBe 0
        s.waitQueueSize shouldBe 0
        s.totalConnections shouldBe s.availableConnections + s.pendingConnections
        (s.totalConnections <= 3) shouldBe true
        (served.get() > 0) shouldBe true
        pool.close()
    }

    test("every checkout ends and nothing is lost under contention (4 threads, pool on the same threads)") {
        for (seed in 1..3) stress(threads, threads, seed)
    }

    test("every checkout ends and nothing is lost under contention (Dispatchers.Default, unconfined establishment)") {
        for (seed in 4..6) stress(Dispatchers.Default, Dispatchers.Unconfined, seed)
    }
})
