package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionPoolState
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.EstablishmentFailure
import dev.mooring.cmap.PoolClosedException
import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.bson.types.ObjectId

/**
 * The [ConnectionPool] the factory function creates; the contract is the interface's, how it is
 * kept is the factory's KDoc. Its internal members are the hooks of sdam's [CheckOutGuard] and of
 * cmap's own tests.
 */
internal class DefaultConnectionPool(
    override val address: ServerAddress,
    override val settings: ConnectionPoolSettings,
    connectionFactory: ConnectionFactory,
    eventBus: EventBus = EventBus(),
    override val loadBalanced: Boolean = false,
    context: CoroutineContext = Dispatchers.Default,
    logging: LoggingSettings = LoggingSettings.DEFAULT,
    onEstablishmentError: suspend (EstablishmentFailure) -> Unit = {},
) : ConnectionPool {
    // Each member of the interface takes the lock, runs one transition of the machine (which never suspends)
    // and releases it; awaiting and I/O happen after, here or in the establisher.
    private val lock = PoolLock()

    /** Test-only: see [PoolLock.modelChecking]. Never set in production. */
    internal var modelChecking: Boolean
        get() = lock.modelChecking
        set(value) {
            lock.modelChecking = value
        }


    private val events = PoolEventEmitter(address, eventBus, logging)
    private val poolJob = SupervisorJob(context[Job])
    private val scope = CoroutineScope(context.minusKey(Job) + poolJob)
    private val maintenance = PoolMaintenance(address, scope, settings.maintenanceIntervalMS) { lock.withLock { machine.maintain() } }
    private val machine: PoolStateMachine = PoolStateMachine(
        address, settings, loadBalanced, connectionFactory, events,
        launchEstablishment = { p -> scope.launch(start = CoroutineStart.ATOMIC) { establisher.establish(p) } },
        wakeMaintenance = maintenance::wake,
        served = lock.served,
    )
    private val establisher = Establisher(address, loadBalanced, lock, machine, poolJob, onEstablishmentError)

    init {
        events.poolCreated(settings)
        maintenance.start()
    }

    override val state: ConnectionPoolState get() = machine.state

    override suspend fun checkOut(): Connection = checkOutGuarded(null)

    /** [checkOut], failing with [PoolClosedException] once [guard] is raised (see [CheckOutGuard]). */
    internal suspend fun checkOutGuarded(guard: CheckOutGuard?): Connection {
        val start = System.nanoTime()
        // Only tail calls suspend here, so the uncontended path with an idle connection allocates nothing.
        // (A checkout hands nothing to other waiters, so there are no served waiters to run after it.)
        if (!lock.tryLockSpinning()) return checkOutSlow(start, guard)
        val r = try {
            machine.checkOut(start, guard)
        } finally {
            lock.unlock()
        }
        if (r is PooledConnection) return r
        if (r is Failed) throw r.error
        return awaitWaiter(r as Waiter)
    }

    private suspend fun checkOutSlow(start: Long, guard: CheckOutGuard?): Connection {
        val r = lock.lockedSlow { machine.checkOut(start, guard) }
        if (r is PooledConnection) return r
        if (r is Failed) throw r.error
        return awaitWaiter(r as Waiter)
    }

    override suspend fun checkIn(connection: Connection) {
        val c = ownConnection(connection)
        lock.withLock { machine.checkIn(c) }
    }

    override suspend fun pin(connection: Connection, purpose: ConnectionPurpose) {
        val c = ownConnection(connection)
        lock.withLock { machine.pin(c, purpose) }
    }

    override suspend fun <T> withConnection(block: suspend (Connection) -> T): T {
        val c = checkOut()
        try {
            yield() // leave the thread that served this checkout before running the caller's code (ConnectionPool "Fairness")
            return block(c)
        } finally {
            checkIn(c)
        }
    }

    override fun markPerished(connection: Connection) {
        ownConnection(connection).errored = true
    }

    override suspend fun ready() {
        if (lock.withLock { machine.ready() }) maintenance.wake()
    }

    override suspend fun clear(interruptInUseConnections: Boolean, cause: Throwable?) {
        check(!loadBalanced) { "a load-balanced pool is cleared per serviceId" }
        val cleared = lock.withLock { machine.clear(interruptInUseConnections, cause) }
        if (cleared !is ClearOutcome.Cleared) return
        for (c in cleared.connections) c.interrupt()
        for (p in cleared.establishments) p.job?.cancel()
        maintenance.wake()
    }

    override suspend fun clear(serviceId: ObjectId) {
        check(loadBalanced) { "clear(serviceId) is only for load-balanced pools" }
        lock.withLock { machine.clear(serviceId) }
        maintenance.wake()
    }

    override suspend fun close() {
        val toCancel = lock.withLock { machine.close() }
        for (p in toCancel) p.job?.cancel()
        withContext(NonCancellable) {
            poolJob.cancel()
            poolJob.join()
        }
    }

    override suspend fun statistics(): ConnectionPoolStatistics = lock.withLock { machine.statistics() }

    override fun statisticsSnapshot(): ConnectionPoolStatistics = machine.statistics()

    override suspend fun serviceGeneration(serviceId: ObjectId): Int = lock.withLock { machine.serviceGeneration(serviceId) }

    override fun toString(): String = "ConnectionPool($address, ${machine.state})"

    private fun ownConnection(connection: Connection): PooledConnection {
        require(connection is PooledConnection && connection.owner === machine) {
            "connection ${connection.id} was not checked out from the pool for $address"
        }
        return connection
    }

    /** Phase 1: wait in the queue (bounded by waitQueueTimeoutMS); phase 2: wait for the establishment it owns. */
    private suspend fun awaitWaiter(w: Waiter): Connection {
        val handed = try {
            val timeout = settings.waitQueueTimeoutMS
            if (timeout > 0 && !w.isHandedVolatile) {
                val remainingMs = timeout - (System.nanoTime() - w.startNanos) / 1_000_000
                (if (remainingMs > 0) withTimeoutOrNull(remainingMs) { w.awaitOutcome() } else null)
                    ?: lock.withLock { machine.waitTimedOut(w) }
            } else {
                w.awaitOutcome()
            }
        } catch (e: CancellationException) {
            lock.withLock { machine.abandon(w) }
            throw e
        }
        val r: Established = when (handed) {
            is PendingEstablishment -> awaitEstablishment(handed, w)
            is PooledConnection -> handed
            is Failed -> handed
        }
        return when (r) {
            is PooledConnection -> r
            is Failed -> throw r.error
        }
    }

    /**
     * Awaits the establishment [p] the checkout of [w] owns; when the waiter's guard is raised
     * first, see [PoolStateMachine.establishmentRefused].
     */
    private suspend fun awaitEstablishment(p: PendingEstablishment, w: Waiter): Established {
        val guard = w.guard
        return try {
            if (guard == null) {
                p.outcome.await()
            } else {
                select {
                    p.outcome.onAwait { it }
                    guard.raised.onJoin { lock.withLock { machine.establishmentRefused(p, w) } }
                }
            }
        } catch (e: CancellationException) {
            lock.withLock { machine.disown(p) }
            throw e
        }
    }

    /** Fails the checkouts through [guard] waiting in the queue (see [CheckOutGuard.failWaiting]). */
    internal suspend fun failGuarded(guard: CheckOutGuard) {
        lock.withLock { machine.failGuarded(guard) }
    }
}
