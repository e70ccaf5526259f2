package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.internal.pool.DefaultConnectionPool
import dev.mooring.events.EventBus
import io.kotest.core.spec.style.FunSpec
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions

/**
 * The Lincheck model: a pool of at most one connection over fake connections. Every
 * [useConnection] checks out and checks back in, so in any sequential history it never waits;
 * a concurrent history is correct only if no connection is lost or owned twice, no waiter is
 * forgotten (it would stay suspended) and a checkout fails with "cleared" only when a clear
 * could have come before it. Establishment runs on the unconfined dispatcher, so it happens on
 * the threads Lincheck controls. The pool runs in its model-checking mode (one lock attempt
 * before queueing, no inline hand-off): Lincheck's thread model cannot follow a critical section
 * that runs on the releasing thread (with the production hand-off the model check hangs inside
 * `Dispatchers.Unconfined`'s event loop). [PoolProductionScenario] checks the production path.
 */
class PoolLincheckScenario {
    private val factory = FakeConnectionFactory()
    private val pool = DefaultConnectionPool(
        TEST_ADDRESS,
        ConnectionPoolSettings(maxPoolSize = 1, maxConnecting = 1, maintenanceIntervalMS = -1),
        factory, EventBus(), context = Dispatchers.Unconfined,
    ).also { it.modelChecking = true }

    init {
        runBlocking { pool.ready() }
    }

    @Operation(cancellableOnSuspension = false)
    suspend fun useConnection(): String = useOnce(pool)

    @Operation(cancellableOnSuspension = false)
    suspend fun clear() = pool.clear()

    @Operation(cancellableOnSuspension = false)
    suspend fun ready() = pool.ready()

    @Operation(cancellableOnSuspension = false)
    suspend fun consistent(): Boolean {
        val s = pool.statistics()
        return s.totalConnections <= 1 &&
            s.totalConnections == s.availableConnections + s.pendingConnections + s.inUseConnections &&
            s.inUseConnections <= 1
    }
}

/**
 * The same model as [PoolLincheckScenario] on the production path, for Lincheck's stress mode
 * (real threads, real dispatch): the spinning lock, the `Unconfined` hand-off of a queued critical
 * section and [dev.mooring.cmap.internal.pool.ServedWaiters] resuming served waiters on the
 * releasing thread. Each operation runs as a coroutine on `Dispatchers.Default`, the callers'
 * usual dispatcher, and the pool establishes there too, so a check-in that serves a waiter of
 * the same dispatcher runs it inline, as in production. Lincheck's thread only waits for the
 * coroutine (this is a test; [runBlocking] is no library code), so to Lincheck the operations do
 * not suspend: a waiter that is never resumed hangs its operation, which Lincheck reports.
 */
class PoolProductionScenario {
    private val pool = ConnectionPool(
        TEST_ADDRESS,
        ConnectionPoolSettings(maxPoolSize = 1, maxConnecting = 1, maintenanceIntervalMS = -1),
        FakeConnectionFactory(), EventBus(), context = Dispatchers.Default,
    )

    init {
        runBlocking { pool.ready() }
    }

    private fun <T> onDefault(block: suspend () -> T): T = runBlocking(Dispatchers.Default) { block() }

    @Operation
    fun useConnection(): String = onDefault { useOnce(pool) }

    @Operation
    fun clear() = onDefault { pool.clear() }

    @Operation
    fun ready() = onDefault { pool.ready() }

    @Operation
    fun consistent(): Boolean = onDefault {
        val s = pool.statistics()
        s.totalConnections <= 1 &&
            s.totalConnections == s.availableConnections + s.pendingConnections + s.inUseConnections &&
            s.inUseConnections <= 1
    }
}

class PoolLincheckSpec : FunSpec({
    test("checkOut and checkIn are linearizable under model checking (with clear and ready)") {
        ModelCheckingOptions()
            // Sized for CI on 2 cores (about a minute): 4 scenarios x 50 interleavings each.
            // Run larger searches by hand with -Dmooring.lincheck.iterations=N.
            .iterations(Integer.getInteger("mooring.lincheck.iterations", 4))
            .invocationsPerIteration(50)
            .threads(3)
            .actorsPerThread(2)
            .sequentialSpecification(PoolLincheckScenario::class.java)
            .check(PoolLincheckScenario::class)
    }

    test("checkOut and checkIn are linearizable on the production path under stress (with clear and ready)") {
        StressOptions()
            // Sized for CI on 2 cores (well under a minute). Run larger searches by hand with
            // -Dmooring.lincheck.stress.iterations=N.
            .iterations(Integer.getInteger("mooring.lincheck.stress.iterations", 30))
            .invocationsPerIteration(STRESS_INVOCATIONS)
            .threads(3)
            .actorsPerThread(3)
            .sequentialSpecification(PoolProductionScenario::class.java)
            .check(PoolProductionScenario::class)
    }
})

/** Runs of each stress scenario: each runs its operations on fresh real threads' worth of contention. */
private const val STRESS_INVOCATIONS = 2_000

/** One checkout and check-in, the operation both scenarios run: "ok", or "cleared" when the pool was cleared meanwhile. */
private suspend fun useOnce(pool: ConnectionPool): String = try {
    val c = pool.checkOut()
    val owner = c.id
    pool.checkIn(c)
    if (owner > 0) "ok" else "bad id"
} catch (e: PoolClearedException) {
    "cleared"
}
