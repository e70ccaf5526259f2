package dev.mooring.cmap

import dev.mooring.cmap.internal.pool.CheckOutGuard
import dev.mooring.cmap.internal.pool.ClearOutcome
import dev.mooring.cmap.internal.pool.Established
import dev.mooring.cmap.internal.pool.Establisher
import dev.mooring.cmap.internal.pool.Failed
import dev.mooring.cmap.internal.pool.PendingEstablishment
import dev.mooring.cmap.internal.pool.PoolEventEmitter
import dev.mooring.cmap.internal.pool.PoolLock
import dev.mooring.cmap.internal.pool.PoolMaintenance
import dev.mooring.cmap.internal.pool.PoolStateMachine
import dev.mooring.cmap.internal.pool.PooledConnection
import dev.mooring.cmap.internal.pool.Waiter
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
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.bson.types.ObjectId

/** The CMAP pool states. */
public enum class ConnectionPoolState {
    /** Initial state, and the state after [ConnectionPool.clear]: checkouts fail with [PoolClearedException]. */
    PAUSED,

    /** Checkouts are served and the pool is populated to minPoolSize. */
    READY,

    /** Terminal: checkouts fail with [PoolClosedException]; checked-in connections are closed. */
    CLOSED,
}

/**
 * What the pool tells its owner (SDAM) when establishing a connection failed and no checkout
 * received the error (minPoolSize population, or the checkout that asked for it was cancelled).
 */
public class EstablishmentFailure(
    /** The pool's server. */
    public val address: ServerAddress,
    /** The pool generation the connection was created in (SDAM ignores errors from stale generations). */
    public val generation: Int,
    /** The load-balancer service, when known. */
    public val serviceId: ObjectId?,
    /** The error, with backpressure labels already applied. */
    public val error: Throwable,
)

/**
 * A CMAP connection pool for one server.
 *
 * **Concurrency.** Every member is thread-safe. All state lives behind one fair coroutine
 * [Mutex] that is never held across I/O or suspension: under it the pool decides (take an idle
 * connection, reserve an establishment slot, or enqueue a waiter), then releases it. A
 * contended caller spins briefly before it queues in the Mutex (FIFO; spinning never overtakes
 * a queued caller), and a queued caller's critical section runs on the thread that releases the
 * Mutex, so the lock is never held by a coroutine that is only waiting to be scheduled.
 * Checkouts that must wait are served strictly in FIFO order from the pool's wait queue; each
 * waiter is resumed exactly once with its connection or error, and served waiters also *run* in
 * that order: after releasing the lock, the caller that served them (a check-in, an
 * establishment, a clear) resumes them oldest first, one thread per pool at a time, on its own
 * thread when the waiter has the same dispatcher (no dispatch) and through a task on the
 * waiter's dispatcher otherwise. A served checkout therefore runs on that thread until it next
 * suspends; code there must not block its thread (as in any coroutine): the pool's other served
 * waiters wait for it, and one it blocked on would never be resumed. [withConnection] runs its
 * block only after a `yield()` (a dispatch of its own), so a block that blocks its thread, a Java
 * caller's `join()` for example, never holds up the pool's other waiters.
 * Connections are established by coroutines the pool owns, never under the lock and never
 * blocking other checkouts. Events are published under the lock, so they are in pool order.
 *
 * **Cancellation.** Cancelling a [checkOut] at any point (waiting, while its connection is
 * being established, or after it was handed a connection but before it resumed) leaks nothing:
 * a connection already handed over is given back (a CheckedIn event balances the CheckedOut), and
 * an establishment started for it continues and goes to the oldest waiter or the available list.
 * [checkIn], [clear], [ready] and [close] complete even when their caller is cancelled.
 *
 * **Scope.** The pool owns a [SupervisorJob] child of [context]'s job (when any) running on
 * [context]'s dispatcher (default [Dispatchers.Default]); establishment coroutines and the
 * maintenance coroutine are its children. [close] cancels them and returns only when they have
 * stopped.
 *
 * **After close.** checkOut fails with [PoolClosedException]; checked-in connections are
 * closed; [clear] and [ready] do nothing.
 *
 * @param onEstablishmentError called (outside the lock, on the pool's scope) with every
 *   establishment error, before the connection is closed and before the checkout waiting for
 *   it (if any) fails; SDAM uses it to handle pre-handshake errors (clear the pool, mark the
 *   server Unknown) in the order the SDAM spec tests require. It may call [clear]. Exceptions it
 *   throws are logged and ignored.
 *
 * The states and transitions are those of `docs/architecture.md`, "The pool's states and transitions".
 */
public class ConnectionPool(
    /** The server this pool connects to. */
    public val address: ServerAddress,
    /** The pool options. */
    public val settings: ConnectionPoolSettings,
    connectionFactory: ConnectionFactory,
    eventBus: EventBus = EventBus(),
    /** Load-balanced mode: per-serviceId generations, clear(serviceId) without pausing. */
    public val loadBalanced: Boolean = false,
    context: CoroutineContext = Dispatchers.Default,
    /** Where this pool's `connection` log messages go besides SLF4J (logging.md). */
    logging: LoggingSettings = LoggingSettings.DEFAULT,
    onEstablishmentError: suspend (EstablishmentFailure) -> Unit = {},
) {
    // Each public member takes the lock, runs one transition of the machine (which never suspends)
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

    /** The current state (a racy read without the lock, for diagnostics). */
    public val state: ConnectionPoolState get() = machine.state

    /**
     * Checks out a connection: an idle one (most recently used first), or a new one established
     * for this call, waiting in FIFO order when maxPoolSize or maxConnecting is reached, for at
     * most waitQueueTimeoutMS. Give it back with [checkIn] (or use [withConnection]).
     *
     * @throws PoolClosedException when the pool is closed.
     * @throws PoolClearedException when the pool is paused or is cleared while this call waits.
     * @throws WaitQueueTimeoutException when waitQueueTimeoutMS elapsed in the wait queue.
     * @throws MongoServerException (network, command, protocol, auth) when establishing the
     *   connection for this call failed.
     */
    public suspend fun checkOut(): Connection = checkOutGuarded(null)

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

    /**
     * Returns [connection] to the pool. It is closed when it is perished (stale, errored,
     * interrupted) or the pool is closed; otherwise it goes straight to the oldest waiter, or to
     * the available list. Never suspends for long; completes even if the caller is cancelled.
     *
     * @throws IllegalArgumentException when [connection] did not come from this pool.
     * @throws IllegalStateException when [connection] is not checked out (a double check-in).
     */
    public suspend fun checkIn(connection: Connection) {
        val c = ownConnection(connection)
        lock.withLock { machine.checkIn(c) }
    }

    /**
     * Records that the checked-out [connection] is now held for [purpose] (a cursor or a
     * transaction pins it; [ConnectionPurpose.OPERATION] unpins it) until it is checked in, for
     * the load-balanced wait-queue timeout message (load-balancers.md "Connection Tracking").
     * Suspends for the pool's lock only; safe from any coroutine.
     *
     * @throws IllegalStateException when [connection] is not checked out from this pool.
     */
    public suspend fun pin(connection: Connection, purpose: ConnectionPurpose) {
        val c = ownConnection(connection)
        lock.withLock { machine.pin(c, purpose) }
    }

    /**
     * Checks out a connection, runs [block] with it and always checks it back in. A network or
     * protocol error thrown by [block] marks the connection perished, so it is closed on check-in.
     */
    public suspend fun <T> withConnection(block: suspend (Connection) -> T): T {
        val c = checkOut()
        try {
            yield() // leave the thread that served this checkout before running the caller's code (see the class KDoc)
            return block(c)
        } catch (t: Throwable) {
            if (t is MongoNetworkException || t is MongoProtocolException) markPerished(c)
            throw t
        } finally {
            checkIn(c)
        }
    }

    /**
     * Marks a checked-out [connection] perished (errored) so that it is closed when checked in;
     * SDAM calls it after a network error. Non-suspending, thread-safe, idempotent.
     */
    public fun markPerished(connection: Connection) {
        ownConnection(connection).errored = true
    }

    /**
     * Marks the pool ready (from paused): checkouts are served and minPoolSize population
     * starts. Emits PoolReady only on a real transition; a ready or closed pool is left as is.
     */
    public suspend fun ready() {
        if (lock.withLock { machine.ready() }) maintenance.wake()
    }

    /**
     * Clears the pool (not load-balanced): bumps the generation so every current connection is
     * stale, pauses the pool, and fails every waiting checkout at once with a
     * [PoolClearedException] naming [cause]. PoolCleared is emitted only when the pool was
     * ready. With [interruptInUseConnections], in-use and pending connections of the old
     * generations are interrupted (their operations fail with a retryable error). The next
     * maintenance run is scheduled at once. No-op on a closed pool.
     *
     * @throws IllegalStateException in load-balanced mode (use the serviceId overload).
     */
    public suspend fun clear(interruptInUseConnections: Boolean = false, cause: Throwable? = null) {
        check(!loadBalanced) { "a load-balanced pool is cleared per serviceId" }
        val cleared = lock.withLock { machine.clear(interruptInUseConnections, cause) }
        if (cleared !is ClearOutcome.Cleared) return
        for (c in cleared.connections) c.interrupt()
        for (p in cleared.establishments) p.job?.cancel()
        maintenance.wake()
    }

    /**
     * Clears the connections of one load-balancer service: bumps that service's generation and
     * emits PoolCleared with [serviceId]. Does not pause the pool nor touch the wait queue.
     *
     * @throws IllegalStateException when the pool is not in load-balanced mode.
     */
    public suspend fun clear(serviceId: ObjectId) {
        check(loadBalanced) { "clear(serviceId) is only for load-balanced pools" }
        lock.withLock { machine.clear(serviceId) }
        maintenance.wake()
    }

    /**
     * Closes the pool: closes the available connections, fails waiting checkouts with
     * [PoolClosedException], emits PoolClosed, cancels establishment and maintenance coroutines
     * and returns when they have stopped. In-use connections are closed when checked in.
     * Idempotent; completes even when the caller is cancelled.
     */
    public suspend fun close() {
        val toCancel = lock.withLock { machine.close() }
        for (p in toCancel) p.job?.cancel()
        withContext(NonCancellable) {
            poolJob.cancel()
            poolJob.join()
        }
    }

    /** Gauges read from the pool's own state under its lock (a consistent snapshot). */
    public suspend fun statistics(): ConnectionPoolStatistics = lock.withLock { machine.statistics() }

    /**
     * Gauges read without the lock: never blocks, may mix values from concurrent changes.
     * For metrics scrapers.
     */
    public fun statisticsSnapshot(): ConnectionPoolStatistics = machine.statistics()

    /** The current generation of [serviceId] in load-balanced mode (0 when unknown). */
    public suspend fun serviceGeneration(serviceId: ObjectId): Int = lock.withLock { machine.serviceGeneration(serviceId) }

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
