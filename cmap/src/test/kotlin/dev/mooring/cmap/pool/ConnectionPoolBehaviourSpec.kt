package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionClosedReason
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionPoolState
import dev.mooring.cmap.EstablishmentFailure
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoSocks5Exception
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.PoolClosedException
import dev.mooring.cmap.PoolErrorLabels
import dev.mooring.cmap.Socks5Failure
import dev.mooring.cmap.WaitQueueTimeoutException
import dev.mooring.events.EventBus
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.types.ObjectId
import java.net.UnknownHostException
import java.util.Collections

private suspend fun awaitUntil(what: String, cond: suspend () -> Boolean) {
    withTimeout(20_000) {
        while (!cond()) delay(1)
    }
}

private class Fixture(
    settings: ConnectionPoolSettings = ConnectionPoolSettings(),
    loadBalanced: Boolean = false,
    hook: suspend (EstablishmentFailure) -> Unit = {},
) {
    val factory = FakeConnectionFactory()
    val events: MutableList<ConnectionPoolEvent> = Collections.synchronizedList(ArrayList())
    val bus = EventBus().also { b -> b.addListener { e -> if (e is ConnectionPoolEvent) events.add(e) } }
    val pool = ConnectionPool(TEST_ADDRESS, settings, factory, bus, loadBalanced, onEstablishmentError = hook)
    inline fun <reified T : ConnectionPoolEvent> eventsOf(): List<T> = synchronized(events) { events.filterIsInstance<T>() }
}

class ConnectionPoolBehaviourSpec : FunSpec({
    test("a checkout cancelled while waiting leaves the queue and leaks nothing") {
        val f = Fixture(ConnectionPoolSettings(maxPoolSize = 1))
        f.pool.ready()
        val c = f.pool.checkOut()
        coroutineScope {
            val waiter = launch { f.pool.checkOut() }
            awaitUntil("waiter queued") { f.pool.statistics().waitQueueSize == 1 }
            waiter.cancelAndJoin()
        }
        f.pool.statistics().waitQueueSize shouldBe 0
        f.pool.checkIn(c)
        val s = f.pool.statistics()
        s.totalConnections shouldBe 1
        s.availableConnections shouldBe 1
        s.inUseConnections shouldBe 0
        f.pool.close()
    }

    test("a checkout cancelled while its connection is established does not abort the establishment") {
        val f = Fixture()
        f.factory.establishGate = CompletableDeferred()
        f.pool.ready()
        coroutineScope {
            val co = launch { f.pool.checkOut() }
            awaitUntil("establishing") { f.factory.establishStarted.get() == 1 }
            co.cancelAndJoin()
        }
        f.pool.statistics().pendingConnections shouldBe 1
        f.factory.establishGate!!.complete(Unit)
        awaitUntil("available") { f.pool.statistics().availableConnections == 1 }
        val s = f.pool.statistics()
        s.totalConnections shouldBe 1
        s.pendingConnections shouldBe 0
        f.factory.created.single().isClosed shouldBe false
        // the established connection is reused, not a new one
        val c = f.pool.checkOut()
        c.id shouldBe 1L
        f.pool.checkIn(c)
        f.pool.close()
    }

    test("a connection established for a cancelled checkout goes to the oldest waiter") {
        val f = Fixture(ConnectionPoolSettings(maxPoolSize = 1))
        f.factory.establishGate = CompletableDeferred()
        f.pool.ready()
        coroutineScope {
            val first = launch { f.pool.checkOut() }
            awaitUntil("establishing") { f.factory.establishStarted.get() == 1 }
            val second = async { f.pool.checkOut() }
            awaitUntil("second queued") { f.pool.statistics().waitQueueSize == 1 }
            first.cancelAndJoin()
            f.factory.establishGate!!.complete(Unit)
            val c = second.await()
            c.id shouldBe 1L
            f.pool.checkIn(c)
        }
        f.pool.close()
    }

    test("withConnection checks in, and a network error closes the connection as perished") {
        val f = Fixture()
        f.pool.ready()
        f.pool.withConnection { it.command("admin", BsonDocument()) }
        f.pool.statistics().availableConnections shouldBe 1
        shouldThrow<MongoNetworkException> {
            f.pool.withConnection { c ->
                f.factory.created.first().close()
                c.command("admin", BsonDocument())
            }
        }
        val s = f.pool.statistics()
        s.totalConnections shouldBe 0
        s.inUseConnections shouldBe 0
        f.eventsOf<ConnectionClosedEvent>().single().reason shouldBe ConnectionClosedReason.ERROR
        f.pool.close()
    }

    test("clear with interruptInUseConnections fails in-flight operations with a retryable error naming the monitor timeout") {
        val f = Fixture()
        f.pool.ready()
        val c = f.pool.checkOut()
        f.factory.commandGate = CompletableDeferred()
        coroutineScope {
            val op = async { runCatching { c.command("admin", BsonDocument()) } }
            awaitUntil("command in flight") { true }
            f.pool.clear(interruptInUseConnections = true)
            val err = op.await().exceptionOrNull()
            err.shouldBeInstanceOf<PoolClearedException>()
            err.message shouldBe "Connection to $TEST_ADDRESS interrupted due to server monitor timeout"
            err.hasErrorLabel(PoolErrorLabels.RETRYABLE_WRITE_ERROR) shouldBe true
        }
        f.pool.checkIn(c)
        f.eventsOf<ConnectionClosedEvent>().single().reason shouldBe ConnectionClosedReason.STALE
        f.eventsOf<PoolClearedEvent>().single().interruptInUseConnections shouldBe true
        f.pool.statistics().totalConnections shouldBe 0
        f.pool.close()
    }

    test("clear fails every waiter at once with PoolClearedException naming the cause, and pauses the pool") {
        val f = Fixture(ConnectionPoolSettings(maxPoolSize = 1))
        f.pool.ready()
        val held = f.pool.checkOut()
        coroutineScope {
            val waiters = (1..3).map { async(start = CoroutineStart.UNDISPATCHED) { runCatching { f.pool.checkOut() } } }
            awaitUntil("queued") { f.pool.statistics().waitQueueSize == 3 }
            f.pool.clear(cause = IllegalStateException("boom"))
            for (w in waiters) {
                val e = w.await().exceptionOrNull()
                e.shouldBeInstanceOf<PoolClearedException>()
                e.message!! shouldContain "was cleared because another operation failed with: java.lang.IllegalStateException: boom"
            }
        }
        f.pool.state shouldBe ConnectionPoolState.PAUSED
        shouldThrow<PoolClearedException> { f.pool.checkOut() }
        f.eventsOf<ConnectionCheckOutFailedEvent>().map { it.reason } shouldContainExactly List(4) { ConnectionCheckOutFailedReason.CONNECTION_ERROR }
        f.pool.checkIn(held)
        f.pool.close()
    }

    test("waitQueueTimeoutMS bounds the wait with WaitQueueTimeoutException") {
        val f = Fixture(ConnectionPoolSettings(maxPoolSize = 1, waitQueueTimeoutMS = 20))
        f.pool.ready()
        val held = f.pool.checkOut()
        val e = shouldThrow<WaitQueueTimeoutException> { f.pool.checkOut() }
        e.message shouldBe WaitQueueTimeoutException.MESSAGE
        f.eventsOf<ConnectionCheckOutFailedEvent>().single().reason shouldBe ConnectionCheckOutFailedReason.TIMEOUT
        f.pool.statistics().waitQueueSize shouldBe 0
        f.pool.checkIn(held)
        f.pool.close()
    }

    test("establishment network errors get the backpressure labels; DNS failures do not") {
        val f = Fixture()
        f.pool.ready()
        f.factory.establishError = { MongoNetworkException("connection reset", TEST_ADDRESS, 0, false) }
        val e1 = shouldThrow<MongoNetworkException> { f.pool.checkOut() }
        e1.hasErrorLabel(PoolErrorLabels.SYSTEM_OVERLOADED_ERROR) shouldBe true
        e1.hasErrorLabel(PoolErrorLabels.RETRYABLE_ERROR) shouldBe true
        f.factory.establishError = { MongoNetworkException("no such host", TEST_ADDRESS, 0, false, UnknownHostException("db.example")) }
        val e2 = shouldThrow<MongoNetworkException> { f.pool.checkOut() }
        e2.errorLabels shouldBe emptySet()
        f.factory.failAfterHello = true
        f.factory.establishError = { MongoNetworkException("auth read failed", TEST_ADDRESS, 0, false) }
        val e3 = shouldThrow<MongoNetworkException> { f.pool.checkOut() }
        e3.errorLabels shouldBe emptySet()
        f.eventsOf<ConnectionCheckOutFailedEvent>().map { it.reason }.toSet() shouldBe setOf(ConnectionCheckOutFailedReason.CONNECTION_ERROR)
        f.pool.statistics().totalConnections shouldBe 0
        f.pool.close()
    }

    test("SOCKS5 proxy failures are network errors that never indicate overload: no backpressure labels (socks5.md)") {
        val f = Fixture()
        f.pool.ready()
        for (failure in Socks5Failure.entries) {
            f.factory.establishError = {
                MongoSocks5Exception("SOCKS5 proxy proxy.example:1080 for $TEST_ADDRESS: $failure", TEST_ADDRESS, 0, "proxy.example:1080", failure)
            }
            val e = shouldThrow<MongoSocks5Exception> { f.pool.checkOut() }
            e.failure shouldBe failure
            e.errorLabels shouldBe emptySet()
        }
        // a plain network error during the same phase still gets them: the exemption is for the proxy only
        f.factory.establishError = { MongoNetworkException("connection reset", TEST_ADDRESS, 0, false) }
        shouldThrow<MongoNetworkException> { f.pool.checkOut() }.hasErrorLabel(PoolErrorLabels.SYSTEM_OVERLOADED_ERROR) shouldBe true
        f.pool.close()
    }

    test("population errors go to the establishment hook, which may clear the pool") {
        val failures = Collections.synchronizedList(ArrayList<EstablishmentFailure>())
        lateinit var f: Fixture
        f = Fixture(ConnectionPoolSettings(minPoolSize = 1, maintenanceIntervalMS = 10)) { failure ->
            failures.add(failure)
            f.pool.clear(cause = failure.error)
        }
        f.factory.establishError = { MongoNetworkException("refused", TEST_ADDRESS, 0, false, UnknownHostException("x")) }
        f.pool.ready()
        awaitUntil("hook called") { failures.isNotEmpty() }
        awaitUntil("paused") { f.pool.state == ConnectionPoolState.PAUSED }
        failures.first().generation shouldBe 0
        f.pool.close()
    }

    test("a waiting checkout's establishment error reaches the hook (which clears) before ConnectionClosed and CheckOutFailed") {
        lateinit var f: Fixture
        val failures = Collections.synchronizedList(ArrayList<EstablishmentFailure>())
        f = Fixture { failure ->
            failures.add(failure)
            f.pool.clear(cause = failure.error)
        }
        f.factory.establishError = { MongoNetworkException("reset during authentication", TEST_ADDRESS, 0, false) }
        f.pool.ready()
        val e = shouldThrow<MongoNetworkException> { f.pool.checkOut() }
        e.message shouldBe "reset during authentication"
        failures.size shouldBe 1
        val order = synchronized(f.events) { f.events.map { it::class.simpleName } }
        order.filter { it == "PoolClearedEvent" || it == "ConnectionClosedEvent" || it == "ConnectionCheckOutFailedEvent" } shouldContainExactly
            listOf("PoolClearedEvent", "ConnectionClosedEvent", "ConnectionCheckOutFailedEvent")
        f.pool.close()
    }

    test("load-balanced: an error after the hello (authentication) reaches the hook with the hello's serviceId") {
        val sid = ObjectId()
        lateinit var f: Fixture
        val failures = Collections.synchronizedList(ArrayList<EstablishmentFailure>())
        f = Fixture(loadBalanced = true) { failure ->
            failures.add(failure)
            failure.serviceId?.let { f.pool.clear(it) }
        }
        f.factory.serviceId = sid
        f.factory.failAfterHello = true
        f.factory.establishError = { MongoNetworkException("closed during saslContinue", TEST_ADDRESS, 0, false) }
        f.pool.ready()
        shouldThrow<MongoNetworkException> { f.pool.checkOut() }
        failures.single().serviceId shouldBe sid
        f.eventsOf<PoolClearedEvent>().single().serviceId shouldBe sid
        f.pool.close()
    }

    test("close fails waiters, stops establishments and closes later check-ins") {
        val f = Fixture(ConnectionPoolSettings(maxPoolSize = 2))
        f.pool.ready()
        val held = f.pool.checkOut()
        f.factory.establishGate = CompletableDeferred()
        coroutineScope {
            val establishing = async { runCatching { f.pool.checkOut() } }
            awaitUntil("establishing") { f.factory.establishStarted.get() == 2 }
            val waiting = async { runCatching { f.pool.checkOut() } }
            awaitUntil("queued") { f.pool.statistics().waitQueueSize == 1 }
            f.pool.close()
            establishing.await().exceptionOrNull().shouldBeInstanceOf<PoolClosedException>()
            waiting.await().exceptionOrNull().shouldBeInstanceOf<PoolClosedException>()
        }
        f.pool.statistics().totalConnections shouldBe 1
        f.pool.checkIn(held)
        f.pool.statistics().totalConnections shouldBe 0
        f.factory.created.all { it.isClosed } shouldBe true
        shouldThrow<PoolClosedException> { f.pool.checkOut() }.message shouldBe PoolClosedException.MESSAGE
    }

    test("checking in a foreign or already checked-in connection is a typed error") {
        val f = Fixture()
        val other = Fixture()
        f.pool.ready(); other.pool.ready()
        val c = f.pool.checkOut()
        val o = other.pool.checkOut()
        shouldThrow<IllegalArgumentException> { f.pool.checkIn(o) }
        f.pool.checkIn(c)
        shouldThrow<IllegalStateException> { f.pool.checkIn(c) }
        shouldThrow<IllegalStateException> { c.command("admin", BsonDocument()) }
        other.pool.checkIn(o)
        f.pool.close(); other.pool.close()
    }

    test("ready is idempotent and a closed pool stays closed") {
        val f = Fixture()
        f.pool.ready(); f.pool.ready()
        f.eventsOf<dev.mooring.cmap.PoolReadyEvent>().size shouldBe 1
        f.pool.close()
        f.pool.ready()
        f.pool.state shouldBe ConnectionPoolState.CLOSED
    }

    test("load-balanced pools clear per serviceId without pausing") {
        val f = Fixture(loadBalanced = true)
        val sid = ObjectId()
        f.factory.serviceId = sid
        f.pool.ready()
        val a = f.pool.checkOut()
        val b = f.pool.checkOut()
        f.pool.checkIn(b)
        f.pool.clear(sid)
        f.pool.state shouldBe ConnectionPoolState.READY
        f.pool.serviceGeneration(sid) shouldBe 1
        f.eventsOf<PoolClearedEvent>().single().serviceId shouldBe sid
        f.pool.checkIn(a)
        val c = f.pool.checkOut() // both old connections are stale: a new one with the new generation
        c.id shouldBe 3L
        // Once the service had no connections left its entry was removed (CMAP load-balancer mode),
        // so the new connection starts the service's generations afresh.
        c.generation shouldBe f.pool.serviceGeneration(sid)
        f.eventsOf<ConnectionClosedEvent>().map { it.reason } shouldBe listOf(ConnectionClosedReason.STALE, ConnectionClosedReason.STALE)
        shouldThrow<IllegalStateException> { f.pool.clear() }
        f.pool.checkIn(c)
        f.pool.close()
    }

    test("idle connections are pruned by maintenance and minPoolSize is restored while ready") {
        val f = Fixture(ConnectionPoolSettings(minPoolSize = 2, maxIdleTimeMS = 5, maintenanceIntervalMS = 5))
        f.pool.ready()
        awaitUntil("populated") { f.pool.statistics().availableConnections == 2 }
        awaitUntil("pruned and repopulated") { f.eventsOf<ConnectionClosedEvent>().any { it.reason == ConnectionClosedReason.IDLE } }
        awaitUntil("repopulated") { f.pool.statistics().availableConnections == 2 }
        f.pool.close()
        f.pool.statistics().totalConnections shouldBe 0
    }
})
