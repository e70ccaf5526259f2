package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.PoolClosedException
import dev.mooring.cmap.internal.pool.CheckOutGuard
import dev.mooring.events.EventBus
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import java.util.Collections

/** [CheckOutGuard]: how the cluster fails its operations' checkouts when it begins closing, without closing the pool. */
class CheckOutGuardSpec : FunSpec({
    class Fixture(maxPoolSize: Int) {
        val factory = FakeConnectionFactory()
        val events: MutableList<ConnectionPoolEvent> = Collections.synchronizedList(ArrayList())
        val bus = EventBus().also { b -> b.addListener { e -> if (e is ConnectionPoolEvent) events.add(e) } }
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = maxPoolSize), factory, bus, false)
        val guard = CheckOutGuard()
        inline fun <reified T : ConnectionPoolEvent> eventsOf(): List<T> = synchronized(events) { events.filterIsInstance<T>() }
        fun failedReasons() = synchronized(events) { events.filterIsInstance<ConnectionCheckOutFailedEvent>().map { it.reason } }

        /** Readies the pool and checks out its only connection, so the next checkouts wait. */
        suspend fun holdingTheOnlyConnection() = pool.ready().let { pool.checkOut() }
    }

    suspend fun awaitUntil(cond: suspend () -> Boolean) = withTimeout(20_000) { while (!cond()) delay(1) }

    test("raised: the guarded waiters fail with PoolClosedException, the others keep their places and are served in order") {
        val f = Fixture(maxPoolSize = 1)
        val guard = f.guard
        val held = f.holdingTheOnlyConnection()
        coroutineScope {
            val plain1 = async { f.pool.checkOut() }
            awaitUntil { f.pool.statistics().waitQueueSize == 1 }
            val guarded = async { runCatching { guard.checkOut(f.pool) } }
            awaitUntil { f.pool.statistics().waitQueueSize == 2 }
            val plain2 = async { f.pool.checkOut() }
            awaitUntil { f.pool.statistics().waitQueueSize == 3 }

            guard.raise()
            guard.failWaiting(f.pool)
            withTimeout(20_000) { guarded.await() }.exceptionOrNull().shouldBeInstanceOf<PoolClosedException>().address shouldBe TEST_ADDRESS
            f.pool.statistics().waitQueueSize shouldBe 2
            f.failedReasons() shouldContainExactly listOf(ConnectionCheckOutFailedReason.POOL_CLOSED)

            // the plain waiters are served first come, first served: plain1, then plain2
            f.pool.checkIn(held)
            val c1 = plain1.await()
            plain2.isCompleted shouldBe false
            f.pool.checkIn(c1)
            f.pool.checkIn(plain2.await())
        }
        f.pool.statistics().totalConnections shouldBe 1
        f.pool.close()
    }

    test("raised: a guarded checkout fails at once even with an idle connection; a plain one is served") {
        val f = Fixture(maxPoolSize = 2)
        val guard = f.guard
        f.pool.ready()
        f.pool.checkIn(f.pool.checkOut())
        guard.raise()
        shouldThrow<PoolClosedException> { guard.checkOut(f.pool) }
        val c = f.pool.checkOut()
        c.id shouldBe 1L
        f.pool.checkIn(c)
        f.pool.statistics().availableConnections shouldBe 1
        f.pool.close()
    }

    test("raised while its connection is established: the guarded checkout fails (CheckOutFailed, poolClosed), the connection is kept for others") {
        val f = Fixture(maxPoolSize = 1)
        val guard = CheckOutGuard()
        f.factory.establishGate = CompletableDeferred()
        f.pool.ready()
        coroutineScope {
            val guarded = async { runCatching { guard.checkOut(f.pool) } }
            awaitUntil { f.factory.establishStarted.get() == 1 }
            guard.raise()
            guard.failWaiting(f.pool)
            withTimeout(20_000) { guarded.await() }.exceptionOrNull().shouldBeInstanceOf<PoolClosedException>()
            f.failedReasons() shouldContainExactly listOf(ConnectionCheckOutFailedReason.POOL_CLOSED)
            f.factory.establishGate!!.complete(Unit)
            awaitUntil { f.pool.statistics().availableConnections == 1 }
        }
        // the establishment finished for nobody: no CheckedOut for the failed checkout
        f.eventsOf<ConnectionCheckedOutEvent>() shouldBe emptyList()
        val c = f.pool.checkOut()
        c.id shouldBe 1L
        f.pool.checkIn(c)
        f.pool.close()
    }

    test("not raised: a guarded checkout waits and is served like any other") {
        val f = Fixture(maxPoolSize = 1)
        val guard = f.guard
        val held = f.holdingTheOnlyConnection()
        coroutineScope {
            val guarded = async { guard.checkOut(f.pool) }
            awaitUntil { f.pool.statistics().waitQueueSize == 1 }
            shouldThrow<IllegalStateException> { guard.failWaiting(f.pool) } // only after raise
            f.pool.checkIn(held)
            f.pool.checkIn(guarded.await())
        }
        f.failedReasons() shouldBe emptyList()
        f.pool.close()
    }
})
