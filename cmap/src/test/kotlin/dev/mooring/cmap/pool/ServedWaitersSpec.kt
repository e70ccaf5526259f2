package dev.mooring.cmap.pool

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.internal.connection.EventLoop
import dev.mooring.cmap.internal.connection.EventLoopGroup
import dev.mooring.cmap.internal.connection.LoopBound
import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CompletableDeferred
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/** How served waiters are resumed (ServedWaiters): in hand-over order, on their own dispatcher, losing nothing when cancelled. */
class ServedWaitersSpec : FunSpec({
    test("waiters served in FIFO order also run in that order, on a multi-threaded dispatcher") {
        val n = 2_000
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 4), FakeConnectionFactory())
        pool.ready()
        val held = List(4) { pool.checkOut() }
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        val ran = IntArray(n) { -1 }
        val rank = AtomicInteger()
        try {
            // UNDISPATCHED: waiter i is the i-th in the wait queue when launch returns.
            val jobs = List(n) { i ->
                scope.launch(start = CoroutineStart.UNDISPATCHED) {
                    val c = pool.checkOut()
                    ran[i] = rank.getAndIncrement()
                    pool.checkIn(c)
                }
            }
            pool.statistics().waitQueueSize shouldBe n
            held.forEach { pool.checkIn(it) }
            withTimeout(60_000) { jobs.joinAll() }
            ran.toList() shouldBe List(n) { it }
            pool.statistics().inUseConnections shouldBe 0
        } finally {
            scope.cancel()
            pool.close()
        }
    }

    test("a waiter runs on its own dispatcher when a coroutine of another dispatcher checks the connection in") {
        val own = singleThread("own-dispatcher")
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 1), FakeConnectionFactory())
        try {
            pool.ready()
            val c = pool.checkOut()
            val threadAfterCheckOut = CoroutineScope(own).launch(start = CoroutineStart.UNDISPATCHED) {
                val mine = pool.checkOut()
                Thread.currentThread().name.substringBefore(" @") shouldBe "own-dispatcher" // " @coroutine#n" in debug mode
                pool.checkIn(mine)
            }
            awaitQueued(pool)
            withContext(Dispatchers.Default) { pool.checkIn(c) }
            withTimeout(20_000) { threadAfterCheckOut.join() }
            threadAfterCheckOut.isCancelled shouldBe false
            pool.statistics().availableConnections shouldBe 1
        } finally {
            pool.close()
            own.close()
        }
    }

    test("a waiter handed a connection whose socket belongs to another event loop runs on that loop") {
        val group = EventLoopGroup(2)
        val scope = CoroutineScope(SupervisorJob())
        try {
            for (home in 0..1) {
                val homeLoop = group.loopAt(home)
                val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 1), HomedConnectionFactory(homeLoop))
                try {
                    pool.ready()
                    val c = pool.checkOut()
                    val ranOn = CompletableDeferred<Thread>()
                    val waiter = scope.launch(group, start = CoroutineStart.UNDISPATCHED) {
                        val mine = pool.checkOut()
                        ranOn.complete(Thread.currentThread())
                        pool.checkIn(mine)
                    }
                    awaitQueued(pool)
                    parkOn(group) // see the cancelled-waiter test below
                    // The check-in runs on loop 0: the waiter is served there, and resumed on its connection's home.
                    group.loopAt(0).execute { scope.launch(group, start = CoroutineStart.UNDISPATCHED) { pool.checkIn(c) } }
                    withTimeout(20_000) { ranOn.await() } shouldBe homeLoop.thread
                    withTimeout(20_000) { waiter.join() }
                    pool.statistics().availableConnections shouldBe 1
                } finally {
                    pool.close()
                }
            }
        } finally {
            scope.cancel()
            group.close()
        }
    }

    test("each event loop runs the waiters its own check-ins served, even while another loop is busy running one") {
        val group = EventLoopGroup(2)
        val scope = CoroutineScope(SupervisorJob())
        val factory = HomedConnectionFactory { id -> group.loopAt(((id - 1) % 2).toInt()) } // ids 1, 2, ...: loop 0, loop 1
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 2), factory)
        val firstRunning = CountDownLatch(1)
        val secondRan = CountDownLatch(1)
        try {
            pool.ready()
            val onLoop0 = pool.checkOut()
            val onLoop1 = pool.checkOut()
            factory.homeOf(onLoop0.id) shouldBe group.loopAt(0)
            factory.homeOf(onLoop1.id) shouldBe group.loopAt(1)
            val firstSawSecond = CompletableDeferred<Boolean>()
            val secondRanOn = CompletableDeferred<Thread>()
            val first = scope.launch(group, start = CoroutineStart.UNDISPATCHED) {
                val mine = pool.checkOut()
                firstRunning.countDown()
                // Holds loop 0 (its lane's drain) until the second waiter has run: it must not need loop 0.
                firstSawSecond.complete(secondRan.await(10, TimeUnit.SECONDS))
                pool.checkIn(mine)
            }
            awaitQueued(pool, 1)
            parkOn(group) // see the cancelled-waiter test below
            val second = scope.launch(group, start = CoroutineStart.UNDISPATCHED) {
                val mine = pool.checkOut()
                secondRanOn.complete(Thread.currentThread())
                secondRan.countDown()
                pool.checkIn(mine)
            }
            awaitQueued(pool, 2)
            parkOn(group)
            group.loopAt(0).execute { scope.launch(group, start = CoroutineStart.UNDISPATCHED) { pool.checkIn(onLoop0) } }
            firstRunning.await(20, TimeUnit.SECONDS) shouldBe true
            group.loopAt(1).execute { scope.launch(group, start = CoroutineStart.UNDISPATCHED) { pool.checkIn(onLoop1) } }
            withTimeout(20_000) { firstSawSecond.await() } shouldBe true
            withTimeout(20_000) { secondRanOn.await() } shouldBe group.loopAt(1).thread
            withTimeout(20_000) { joinAll(first, second) }
            pool.statistics().availableConnections shouldBe 2
        } finally {
            secondRan.countDown()
            pool.close()
            scope.cancel()
            group.close()
        }
    }

    test("a waiter cancelled after it was served but before it ran gives the connection back") {
        val blocked = singleThread("blocked-dispatcher")
        val events: MutableList<ConnectionPoolEvent> = Collections.synchronizedList(ArrayList())
        val bus = EventBus().also { b -> b.addListener { e -> if (e is ConnectionPoolEvent) events.add(e) } }
        val pool = ConnectionPool(TEST_ADDRESS, ConnectionPoolSettings(maxPoolSize = 1), FakeConnectionFactory(), bus)
        val gate = CountDownLatch(1)
        try {
            pool.ready()
            val c: Connection = pool.checkOut()
            // Checks in what it got: if its checkout was not parked when served (below), it returns normally.
            val waiter = CoroutineScope(blocked).launch(start = CoroutineStart.UNDISPATCHED) { pool.checkIn(pool.checkOut()) }
            awaitQueued(pool)
            // The undispatched checkout parks at once, unless its lock attempt was contended (the pool's
            // maintenance run, on a loaded machine): then it continues on its dispatcher before it parks.
            // Let it park before the dispatcher is blocked; served unparked, it would simply return.
            withContext(blocked) { }
            blocked.executor.execute { gate.await() } // the waiter's dispatcher cannot run it yet
            pool.checkIn(c) // served: the connection is now the waiter's, which has not run
            pool.statistics().inUseConnections shouldBe 1
            waiter.cancel()
            gate.countDown()
            withTimeout(20_000) { waiter.join() }
            withTimeout(20_000) { while (pool.statistics().inUseConnections != 0) delay(1) }
            val s = pool.statistics()
            s.availableConnections shouldBe 1
            s.totalConnections shouldBe 1
            synchronized(events) {
                events.count { it is ConnectionCheckedOutEvent } shouldBe events.count { it is ConnectionCheckedInEvent }
            }
        } finally {
            gate.countDown()
            pool.close()
            blocked.close()
        }
    }
})

/** Fake connections whose sockets belong to the loop [homeFor] picks by connection id (as a real connection's belong to one event loop). */
private class HomedConnectionFactory(private val homeFor: (Long) -> EventLoop) : ConnectionFactory {
    constructor(home: EventLoop) : this({ _ -> home })

    private val fakes = FakeConnectionFactory()
    private val homes = java.util.concurrent.ConcurrentHashMap<Long, EventLoop>()

    fun homeOf(id: Long): EventLoop? = homes[id]

    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection =
        HomedConnection(fakes.create(address, id, generation), homeFor(id).also { homes[id] = it })
}

private class HomedConnection(delegate: EstablishableConnection, override val homeLoop: EventLoop) :
    EstablishableConnection by delegate, LoopBound

private fun singleThread(name: String) = Executors.newSingleThreadExecutor { r -> Thread(r, name) }.asCoroutineDispatcher()

/** Runs a no-op task on every loop of [group]: a checkout continued there before this has parked by then. */
private suspend fun parkOn(group: EventLoopGroup) {
    for (i in 0 until group.size) {
        val done = CompletableDeferred<Unit>()
        group.loopAt(i).execute { done.complete(Unit) }
        withTimeout(20_000) { done.await() }
    }
}

private suspend fun awaitQueued(pool: ConnectionPool, waiters: Int = 1) = withTimeout(20_000) {
    while (pool.statistics().waitQueueSize != waiters) delay(1)
}
