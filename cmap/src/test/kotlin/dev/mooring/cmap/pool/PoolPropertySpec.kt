package dev.mooring.cmap.pool

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionPoolState
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.PoolClosedException
import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.property.Arb
import io.kotest.property.PropTestConfig
import io.kotest.property.ShrinkingMode
import io.kotest.property.arbitrary.choice
import io.kotest.property.arbitrary.constant
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.arbitrary.map
import io.kotest.property.checkAll
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.test.StandardTestDispatcher
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.advanceTimeBy
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.yield
import org.bson.BsonDocument
import java.util.concurrent.ConcurrentLinkedQueue

/** One step of a random pool history. */
private sealed interface Step {
    data object CheckOut : Step
    data class CheckIn(val pick: Int) : Step
    data class Cancel(val pick: Int) : Step
    data object Clear : Step
    data object ClearInterrupt : Step
    data object Ready : Step
    data object Advance : Step
}

private val stepArb: Arb<Step> = Arb.choice(
    Arb.constant(Step.CheckOut), Arb.constant(Step.CheckOut), Arb.constant(Step.CheckOut),
    Arb.int(0..20).map { Step.CheckIn(it) }, Arb.int(0..20).map { Step.CheckIn(it) },
    Arb.int(0..20).map { Step.Cancel(it) },
    Arb.constant(Step.Clear), Arb.constant(Step.ClearInterrupt), Arb.constant(Step.Ready), Arb.constant(Step.Ready),
    Arb.constant(Step.Advance), Arb.constant(Step.Advance),
)

/** Connections whose establishment takes [establishMs] of virtual time (0: completes at the next dispatch). */
private class TimedFactory(private val establishMs: Long) : ConnectionFactory {
    val created = ConcurrentLinkedQueue<FakeConnection>()
    var establishing = 0
    var maxEstablishing = 0
    private val inner = FakeConnectionFactory()

    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection {
        val c = inner.create(address, id, generation) as FakeConnection
        created.add(c)
        return object : EstablishableConnection by c {
            override suspend fun establish() {
                establishing++
                maxEstablishing = maxOf(maxEstablishing, establishing)
                try {
                    if (establishMs == 0L) yield() else delay(establishMs)
                    c.establish()
                } finally {
                    establishing--
                }
            }
        }
    }
}

private enum class Status { WAITING, HELD, RETURNED, FAILED, CANCELLED }

private class Checkout(val seq: Int, val job: Deferred<Connection>) {
    var status = Status.WAITING
    var connection: Connection? = null
    var resolvedAtStep = -1
}

@OptIn(ExperimentalCoroutinesApi::class)
private fun runHistory(steps: List<Step>, maxPool: Int, maxConnecting: Int, establishMs: Long) = runTest {
    val dispatcher = StandardTestDispatcher(testScheduler)
    val factory = TimedFactory(establishMs)
    val pool = ConnectionPool(
        ServerAddress("prop.example"),
        ConnectionPoolSettings(maxPoolSize = maxPool, maxConnecting = maxConnecting, maintenanceIntervalMS = -1),
        factory, EventBus(), context = dispatcher,
    )
    val checkouts = ArrayList<Checkout>()
    var stepNo = 0
    // Checkouts fail (paused, cleared, closed) without failing the test scope.
    val callers = CoroutineScope(dispatcher + SupervisorJob())

    fun TestScope.settle() {
        runCurrent()
        for (c in checkouts) {
            if (c.status != Status.WAITING || !c.job.isCompleted) continue
            c.resolvedAtStep = stepNo
            @OptIn(ExperimentalCoroutinesApi::class)
            val e = c.job.getCompletionExceptionOrNull()
            when {
                e == null -> { c.status = Status.HELD; c.connection = c.job.getCompleted() }
                e is CancellationException -> c.status = Status.CANCELLED
                e is PoolClearedException || e is PoolClosedException -> c.status = Status.FAILED
                else -> throw AssertionError("unexpected checkout failure", e)
            }
        }
    }

    suspend fun check(where: String) {
        val s = pool.statistics()
        val held = checkouts.filter { it.status == Status.HELD }
        val waiting = checkouts.filter { it.status == Status.WAITING }
        fun fail(msg: String): Nothing = throw AssertionError("$where: $msg; stats=$s held=${held.size} waiting=${waiting.size}")
        if (s.totalConnections > maxPool) fail("total exceeds maxPoolSize $maxPool")
        if (s.pendingConnections > maxConnecting) fail("pending exceeds maxConnecting $maxConnecting")
        if (factory.maxEstablishing > maxConnecting) fail("${factory.maxEstablishing} establishments ran at once")
        if (s.totalConnections != s.availableConnections + s.pendingConnections + s.inUseConnections) fail("counts inconsistent")
        if (s.inUseConnections != held.size) fail("in-use count differs from connections held")
        val ids = held.map { it.connection!!.id }
        if (ids.toSet().size != ids.size) fail("a connection is owned twice: $ids")
        if (s.waitQueueSize > waiting.size || waiting.size > s.waitQueueSize + s.pendingConnections) fail("unresolved checkouts do not match the wait queue")
        if (s.state != ConnectionPoolState.READY && s.waitQueueSize != 0) fail("waiters left in a ${s.state} pool")
        if (s.waitQueueSize > 0 && s.availableConnections > 0) fail("a waiter waits while a connection is available")
        if (s.waitQueueSize > 0 && s.totalConnections < maxPool && s.pendingConnections < maxConnecting) fail("a waiter waits while a connection could be established")
        if (establishMs == 0L) {
            // With instant establishment every unresolved checkout is in the queue: no later checkout may have overtaken it.
            val oldestWaiting = waiting.minOfOrNull { it.seq }
            if (oldestWaiting != null && checkouts.any { it.seq > oldestWaiting && it.resolvedAtStep >= 0 && it.status in setOf(Status.HELD, Status.RETURNED) && it.resolvedAtStep == stepNo }) {
                fail("FIFO violated: checkout #$oldestWaiting still waits while a newer one got a connection")
            }
        }
    }

    settle(); check("start")
    for (step in steps) {
        stepNo++
        when (step) {
            Step.CheckOut -> {
                val seq = checkouts.size
                checkouts += Checkout(seq, callers.async(start = CoroutineStart.UNDISPATCHED) { pool.checkOut() })
            }
            is Step.CheckIn -> {
                val held = checkouts.filter { it.status == Status.HELD }
                if (held.isNotEmpty()) {
                    val c = held[step.pick % held.size]
                    if (step.pick % 3 == 0) {
                        // An interrupted connection fails its operations with a retryable PoolClearedException.
                        val e = runCatching { c.connection!!.command("admin", BsonDocument()) }.exceptionOrNull()
                        if (e != null && e !is PoolClearedException) throw AssertionError("unexpected command failure", e)
                    }
                    pool.checkIn(c.connection!!)
                    c.status = Status.RETURNED
                }
            }
            is Step.Cancel -> {
                val waiting = checkouts.filter { it.status == Status.WAITING }
                if (waiting.isNotEmpty()) waiting[step.pick % waiting.size].job.cancel()
            }
            Step.Clear -> pool.clear()
            Step.ClearInterrupt -> pool.clear(interruptInUseConnections = true)
            Step.Ready -> pool.ready()
            Step.Advance -> advanceTimeBy(establishMs.coerceAtLeast(1))
        }
        settle()
        check("after step $stepNo $step")
    }
    // Close: everything is resolved and nothing is left but what is still held.
    val closing = async(dispatcher) { pool.close() }
    advanceTimeBy(establishMs + 1); settle()
    check(closing.isCompleted) { "close() did not return" }
    if (checkouts.any { it.status == Status.WAITING }) throw AssertionError("a checkout was never resolved after close")
    val s = pool.statistics()
    if (s.availableConnections != 0 || s.pendingConnections != 0 || s.waitQueueSize != 0) throw AssertionError("left after close: $s")
    for (c in checkouts.filter { it.status == Status.HELD }) pool.checkIn(c.connection!!)
    if (pool.statistics().totalConnections != 0) throw AssertionError("connections left after close: ${pool.statistics()}")
    if (!factory.created.all { it.isClosed }) throw AssertionError("a connection was never closed")
}

class PoolPropertySpec : FunSpec({
    test("random histories of checkout, checkin, cancel, clear, ready and close keep the pool's invariants") {
        checkAll(
            PropTestConfig(iterations = 400, shrinkingMode = ShrinkingMode.Bounded(40)),
            Arb.list(stepArb, 1..60), Arb.int(1..4), Arb.int(1..3), Arb.choice(Arb.constant(0L), Arb.constant(10L)),
        ) { steps, maxPool, maxConnecting, establishMs ->
            runHistory(steps, maxPool, maxConnecting, establishMs)
        }
    }
})
