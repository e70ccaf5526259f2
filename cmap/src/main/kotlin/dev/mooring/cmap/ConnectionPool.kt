package dev.mooring.cmap

import dev.mooring.cmap.internal.pool.BackpressureLabels
import dev.mooring.cmap.internal.pool.ConnState
import dev.mooring.cmap.internal.pool.PendingEstablishment
import dev.mooring.cmap.internal.pool.PoolEventEmitter
import dev.mooring.cmap.internal.pool.PoolMaintenance
import dev.mooring.cmap.internal.pool.PooledConnection
import dev.mooring.cmap.internal.pool.WaitQueue
import dev.mooring.cmap.internal.pool.Waiter
import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.types.ObjectId
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException

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
    /** The pool-assigned id of the failed connection. */
    public val connectionId: Long,
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
 * waiter is resumed exactly once with its connection or error.
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
 */
public class ConnectionPool(
    /** The server this pool connects to. */
    public val address: ServerAddress,
    /** The pool options. */
    public val settings: ConnectionPoolSettings,
    private val connectionFactory: ConnectionFactory,
    private val eventBus: EventBus = EventBus(),
    /** Load-balanced mode: per-serviceId generations, clear(serviceId) without pausing. */
    public val loadBalanced: Boolean = false,
    context: CoroutineContext = Dispatchers.Default,
    /** Where this pool's `connection` log messages go besides SLF4J (logging.md). */
    logging: LoggingSettings = LoggingSettings.DEFAULT,
    private val onEstablishmentError: suspend (EstablishmentFailure) -> Unit = {},
) {
    private val mutex = Mutex()

    /**
     * Test-only: a contended lock attempt queues at once (no spinning) and resumes on its own
     * dispatcher (no inline hand-off in [lockedSlow]). The Lincheck model check sets it, because
     * its thread model cannot follow a critical section run on the releasing thread; the logic
     * under the lock is the same either way. Never set in production.
     */
    @Volatile internal var modelChecking: Boolean = false

    /** Diagnostics for tests: how many lock acquisitions went through [lockedSlow] (contended past spinning). */
    internal val queuedLockAcquisitions = java.util.concurrent.atomic.AtomicLong()
    private val events = PoolEventEmitter(address, eventBus, logging)
    private val poolJob = SupervisorJob(context[Job])
    internal val scope = CoroutineScope(context.minusKey(Job) + poolJob)
    private val maxIdleNanos = settings.maxIdleTimeMS * 1_000_000
    private val maxPool = if (settings.maxPoolSize == 0) Int.MAX_VALUE else settings.maxPoolSize

    // ---- state guarded by mutex ----
    private var poolState = ConnectionPoolState.PAUSED
    private var generation = 0
    private var nextId = 1L
    private var clearCause: Throwable? = null
    private val available = ArrayDeque<PooledConnection>() // LIFO at the end, oldest first
    private val waiters = WaitQueue()
    private val live = HashSet<PooledConnection>() // every non-closed connection, pending included
    private val pendings = LinkedHashSet<PendingEstablishment>() // oldest first
    private var totalCount = 0
    private var pendingCount = 0
    private var inUseCount = 0
    private var cursorPinnedCount = 0
    private var transactionPinnedCount = 0
    private val serviceGenerations = HashMap<ObjectId, IntArray>() // serviceId -> [generation, connectionCount]

    private val maintenance = PoolMaintenance(this, settings.maintenanceIntervalMS)

    init {
        events.poolCreated(settings)
        maintenance.start()
    }

    /** The current state (a racy read without the lock, for diagnostics). */
    public val state: ConnectionPoolState get() = poolState

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
    public suspend fun checkOut(): Connection {
        val start = System.nanoTime()
        if (!tryLockSpinning()) return checkOutSlow(start)
        val r = try {
            checkOutLocked(start)
        } finally {
            mutex.unlock()
        }
        if (r is PooledConnection) return r
        return awaitWaiter(r as Waiter)
    }

    private suspend fun checkOutSlow(start: Long): Connection {
        val r = locked { checkOutLocked(start) }
        if (r is PooledConnection) return r
        return awaitWaiter(r as Waiter)
    }

    /** The checkout decision: an idle connection (in use now), or a [Waiter] to await. Throws when the pool is not ready. */
    private fun checkOutLocked(start: Long): Any {
        events.checkOutStarted()
        when (poolState) {
            ConnectionPoolState.CLOSED -> throw failLocked(ConnectionCheckOutFailedReason.POOL_CLOSED, start, PoolClosedException(address))
            ConnectionPoolState.PAUSED -> throw failLocked(ConnectionCheckOutFailedReason.CONNECTION_ERROR, start, pausedError())
            ConnectionPoolState.READY -> Unit
        }
        if (waiters.isEmpty()) {
            val c = takeAvailableLocked(start)
            if (c != null) {
                markInUseLocked(c, start)
                return c
            }
        }
        val waiter = Waiter(start)
        if (waiters.isEmpty()) {
            val adoptable = unownedPendingLocked()
            if (adoptable != null) {
                adoptable.owner = waiter
                waiter.hand(adoptable)
            } else if (canEstablishLocked()) {
                waiter.hand(startEstablishmentLocked(waiter))
            } else {
                waiters.addLast(waiter)
            }
        } else {
            waiters.addLast(waiter)
        }
        return waiter
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
        locked {
            check(c.state == ConnState.IN_USE) { "connection ${c.id} to $address is not checked out (double check-in?)" }
            checkInLocked(c)
        }
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
        locked {
            check(c.state == ConnState.IN_USE) { "connection ${c.id} to $address is not checked out" }
            countPurposeLocked(c.purpose, -1)
            c.purpose = purpose
            countPurposeLocked(purpose, +1)
        }
    }

    private fun countPurposeLocked(purpose: ConnectionPurpose, delta: Int) {
        when (purpose) {
            ConnectionPurpose.CURSOR -> cursorPinnedCount += delta
            ConnectionPurpose.TRANSACTION -> transactionPinnedCount += delta
            ConnectionPurpose.OPERATION -> Unit
        }
    }

    /** The wait-queue timeout error: in load-balanced mode with the spec's detailed message. */
    private fun waitQueueTimeoutLocked(): WaitQueueTimeoutException {
        if (!loadBalanced) return WaitQueueTimeoutException(address, settings.waitQueueTimeoutMS)
        val message = WaitQueueTimeoutException.loadBalancedMessage(
            settings.maxPoolSize, cursorPinnedCount, transactionPinnedCount, inUseCount - cursorPinnedCount - transactionPinnedCount,
        )
        return WaitQueueTimeoutException(address, settings.waitQueueTimeoutMS, message)
    }

    /**
     * Checks out a connection, runs [block] with it and always checks it back in. A network or
     * protocol error thrown by [block] marks the connection perished, so it is closed on check-in.
     */
    public suspend fun <T> withConnection(block: suspend (Connection) -> T): T {
        val c = checkOut()
        try {
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
        val changed = locked {
            if (poolState != ConnectionPoolState.PAUSED) return@locked false
            poolState = ConnectionPoolState.READY
            events.poolReady()
            dispatchLocked()
            true
        }
        if (changed) maintenance.wake()
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
        val toInterrupt = ArrayList<PooledConnection>()
        val pendingToInterrupt = ArrayList<PendingEstablishment>()
        val cleared = locked {
            if (poolState == ConnectionPoolState.CLOSED) return@locked false
            val wasReady = poolState == ConnectionPoolState.READY
            val oldGeneration = generation
            generation++
            poolState = ConnectionPoolState.PAUSED
            clearCause = cause
            if (wasReady) events.poolCleared(null, interruptInUseConnections)
            waiters.drain { w -> completeWaiterWithErrorLocked(w, ConnectionCheckOutFailedReason.CONNECTION_ERROR, pausedError()) }
            if (interruptInUseConnections) {
                for (c in live) if (c.state == ConnState.IN_USE && c.gen <= oldGeneration) toInterrupt += c
                for (p in pendings) if (p.connection.gen <= oldGeneration) {
                    p.interrupted = true
                    pendingToInterrupt += p
                }
            }
            true
        }
        if (!cleared) return
        for (c in toInterrupt) c.interrupt()
        for (p in pendingToInterrupt) p.job?.cancel()
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
        locked {
            if (poolState == ConnectionPoolState.CLOSED) return@locked
            val entry = serviceGenerations[serviceId]
            if (entry != null) entry[0]++
            events.poolCleared(serviceId, false)
        }
        maintenance.wake()
    }

    /**
     * Closes the pool: closes the available connections, fails waiting checkouts with
     * [PoolClosedException], emits PoolClosed, cancels establishment and maintenance coroutines
     * and returns when they have stopped. In-use connections are closed when checked in.
     * Idempotent; completes even when the caller is cancelled.
     */
    public suspend fun close() {
        val toCancel = ArrayList<PendingEstablishment>()
        locked {
            if (poolState == ConnectionPoolState.CLOSED) return@locked
            poolState = ConnectionPoolState.CLOSED
            while (available.isNotEmpty()) closeLocked(available.removeLast(), ConnectionClosedReason.POOL_CLOSED, null)
            waiters.drain { w -> completeWaiterWithErrorLocked(w, ConnectionCheckOutFailedReason.POOL_CLOSED, PoolClosedException(address)) }
            events.poolClosed()
            toCancel.addAll(pendings)
        }
        for (p in toCancel) p.job?.cancel()
        withContext(NonCancellable) {
            poolJob.cancel()
            poolJob.join()
        }
    }

    /** Gauges read from the pool's own state under its lock (a consistent snapshot). */
    public suspend fun statistics(): ConnectionPoolStatistics = locked { statisticsLocked() }

    /**
     * Gauges read without the lock: never blocks, may mix values from concurrent changes.
     * For metrics scrapers.
     */
    public fun statisticsSnapshot(): ConnectionPoolStatistics = statisticsLocked()

    /** The current generation of [serviceId] in load-balanced mode (0 when unknown). */
    public suspend fun serviceGeneration(serviceId: ObjectId): Int = locked { serviceGenerations[serviceId]?.get(0) ?: 0 }

    private fun statisticsLocked() = ConnectionPoolStatistics(
        state = poolState,
        totalConnections = totalCount,
        availableConnections = available.size,
        pendingConnections = pendingCount,
        inUseConnections = inUseCount,
        waitQueueSize = waiters.size,
        generation = generation,
        pinnedToCursors = cursorPinnedCount,
    )

    override fun toString(): String = "ConnectionPool($address, $poolState)"

    // ------------------------------------------------------------------------------------------
    // Internals. Functions named *Locked run with the mutex held and never suspend.
    // ------------------------------------------------------------------------------------------

    /**
     * Runs [block] holding the mutex: [tryLockSpinning] first, else [lockedSlow]. Completes even
     * when the caller is cancelled (critical sections are short, and the pool's bookkeeping must
     * never be left half done).
     */
    private suspend inline fun <T> locked(crossinline block: () -> T): T {
        if (!tryLockSpinning()) return lockedSlow { block() }
        try {
            return block()
        } finally {
            mutex.unlock()
        }
    }

    /**
     * Waits for the mutex in its FIFO queue and runs [block] **on the thread that hands the mutex
     * over**: the waiter resumes on [Dispatchers.Unconfined], so the releasing thread runs the
     * queued critical sections one after another (each is a few hundred nanoseconds and never
     * suspends). Without this, the Mutex would hand itself to a coroutine that is merely scheduled
     * to run and hold it through the dispatch latency, and every later arrival would queue behind
     * it (a lock convoy: measured at ~40k checkout+checkin pairs/s with 8 callers on 2 cores).
     * Only the caller's return to its own dispatcher is dispatched, after the mutex is released.
     * The block's result is returned even if the caller was cancelled meanwhile (a checked-out
     * connection or a finished check-in must not be lost); its next suspension point throws.
     */
    private suspend fun <T> lockedSlow(block: () -> T): T {
        val handOff = if (modelChecking) NonCancellable else NonCancellable + Dispatchers.Unconfined
        var result: Any? = NO_RESULT
        queuedLockAcquisitions.incrementAndGet()
        try {
            withContext(handOff) {
                mutex.lock()
                try {
                    result = block()
                } finally {
                    mutex.unlock()
                }
            }
        } catch (e: CancellationException) {
            if (result === NO_RESULT) throw e
        }
        @Suppress("UNCHECKED_CAST")
        return result as T
    }

    /**
     * Tries to take the mutex without suspending. Critical sections are a few hundred nanoseconds
     * and never suspend, so the holder is always a running thread: a short spin, then a few
     * [Thread.yield]s (in case the OS preempted the holder), almost always win. Suspending in
     * [Mutex.lock] instead costs a dispatch, and worse, the Mutex hands itself to the resumed
     * coroutine, which holds it while it merely waits to be scheduled, so every later arrival
     * queues behind it (a lock convoy). Fairness is kept: [Mutex.tryLock] fails while any
     * coroutine is queued in [Mutex.lock], so this never overtakes one; after the bounded attempts
     * the caller queues too.
     */
    private fun tryLockSpinning(): Boolean {
        if (mutex.tryLock()) return true
        if (modelChecking) return false
        for (i in 1..LOCK_SPINS) {
            Thread.onSpinWait()
            if (!mutex.isLocked && mutex.tryLock()) return true
        }
        for (i in 1..LOCK_YIELDS) {
            Thread.yield()
            if (mutex.tryLock()) return true
        }
        return false
    }

    private fun ownConnection(connection: Connection): PooledConnection {
        require(connection is PooledConnection && connection.owner === this) {
            "connection ${connection.id} was not checked out from the pool for $address"
        }
        return connection
    }

    private fun pausedError() = PoolClearedException(address, PoolClearedException.clearedMessage(address, clearCause), clearCause)

    private fun failLocked(reason: ConnectionCheckOutFailedReason, start: Long, error: Throwable): Throwable {
        events.checkOutFailed(reason, start, error)
        return error
    }

    /** Phase 1: wait in the queue (bounded by waitQueueTimeoutMS); phase 2: wait for the establishment we own. */
    private suspend fun awaitWaiter(w: Waiter): Connection {
        var r: Any
        try {
            val timeout = settings.waitQueueTimeoutMS
            r = if (timeout > 0 && !w.isHandedVolatile) {
                val remainingMs = timeout - (System.nanoTime() - w.startNanos) / 1_000_000
                (if (remainingMs > 0) withTimeoutOrNull(remainingMs) { w.awaitOutcome() } else null) ?: waitTimedOut(w)
            } else {
                w.awaitOutcome()
            }
        } catch (e: CancellationException) {
            locked { abandonWaiterLocked(w) }
            throw e
        }
        if (r is PendingEstablishment) r = awaitEstablishment(r)
        if (r is Throwable) throw r
        return r as PooledConnection
    }

    private suspend fun waitTimedOut(w: Waiter): Any = locked {
        if (waiters.remove(w)) {
            failLocked(ConnectionCheckOutFailedReason.TIMEOUT, w.startNanos, waitQueueTimeoutLocked())
        } else {
            w.outcome!! // handed over concurrently: take it
        }
    }

    private suspend fun awaitEstablishment(p: PendingEstablishment): Any =
        try {
            p.outcome.await()
        } catch (e: CancellationException) {
            locked {
                if (p.outcome.isCompleted) {
                    val r = p.outcome.getCompleted()
                    if (r is PooledConnection) handBackLocked(r)
                } else {
                    p.owner = null
                    dispatchLocked() // the oldest waiter adopts it
                }
            }
            throw e
        }

    /** A cancelled checkout leaves the queue or gives back what it was handed. */
    private fun abandonWaiterLocked(w: Waiter) {
        if (waiters.remove(w)) return
        when (val r = w.outcome ?: return) {
            is PooledConnection -> handBackLocked(r)
            is PendingEstablishment -> {
                if (r.outcome.isCompleted) {
                    val o = r.outcome.getCompleted()
                    if (o is PooledConnection) handBackLocked(o)
                } else {
                    r.owner = null
                    dispatchLocked() // the oldest waiter adopts it
                }
            }
        }
    }

    private fun handBackLocked(c: PooledConnection) {
        if (c.state == ConnState.IN_USE) checkInLocked(c)
    }

    private fun checkInLocked(c: PooledConnection) {
        events.checkedIn(c.id)
        inUseCount--
        countPurposeLocked(c.purpose, -1)
        c.purpose = ConnectionPurpose.OPERATION
        val reason = perishedReasonLocked(c, 0L, checkIdle = false)
        when {
            poolState == ConnectionPoolState.CLOSED -> closeLocked(c, ConnectionClosedReason.POOL_CLOSED, null)
            reason != null -> closeLocked(c, reason, null)
            else -> {
                c.state = ConnState.AVAILABLE
                if (maxIdleNanos > 0) c.availableSinceNanos = System.nanoTime()
                available.addLast(c)
            }
        }
        dispatchLocked()
    }

    /** Serves waiters, oldest first, while a connection is available or one may be established. */
    private fun dispatchLocked() {
        if (poolState != ConnectionPoolState.READY) return
        while (!waiters.isEmpty()) {
            val c = takeAvailableLocked(System.nanoTime())
            if (c != null) {
                val w = waiters.pollFirst()!!
                markInUseLocked(c, w.startNanos)
                w.hand(c)
                continue
            }
            val adoptable = unownedPendingLocked()
            if (adoptable != null) {
                val w = waiters.pollFirst()!!
                adoptable.owner = w
                w.hand(adoptable)
                continue
            }
            if (!canEstablishLocked()) return
            val w = waiters.pollFirst()!!
            w.hand(startEstablishmentLocked(w)) // a PendingEstablishment, or the error to throw
        }
    }

    /**
     * A current-generation connection being established for nobody (minPoolSize population, or
     * its checkout was cancelled). The oldest waiter adopts it instead of starting another
     * establishment: it will be available sooner and saves a connection.
     */
    private fun unownedPendingLocked(): PendingEstablishment? {
        if (pendings.isEmpty()) return null
        for (p in pendings) {
            if (p.owner == null && !p.interrupted && (loadBalanced || p.connection.gen == generation)) return p
        }
        return null
    }

    private fun canEstablishLocked(): Boolean = totalCount < maxPool && pendingCount < settings.maxConnecting

    private fun takeAvailableLocked(now: Long): PooledConnection? {
        while (available.isNotEmpty()) {
            val c = available.removeLast()
            val reason = perishedReasonLocked(c, now, checkIdle = true)
            if (reason == null) return c
            closeLocked(c, reason, null)
        }
        return null
    }

    private fun perishedReasonLocked(c: PooledConnection, now: Long, checkIdle: Boolean): ConnectionClosedReason? = when {
        c.errored -> ConnectionClosedReason.ERROR // a connection that failed is closed for its error, even when the pool was cleared since
        c.gen != currentGenerationLocked(c) || c.interrupted -> ConnectionClosedReason.STALE
        c.raw.isClosed -> ConnectionClosedReason.ERROR
        checkIdle && maxIdleNanos > 0 && now - c.availableSinceNanos > maxIdleNanos -> ConnectionClosedReason.IDLE
        else -> null
    }

    private fun currentGenerationLocked(c: PooledConnection): Int {
        if (!loadBalanced) return generation
        val sid = c.serviceId ?: return c.gen
        return serviceGenerations[sid]?.get(0) ?: 0
    }

    private fun markInUseLocked(c: PooledConnection, startNanos: Long) {
        c.state = ConnState.IN_USE
        inUseCount++
        events.checkedOut(c.id, startNanos)
    }

    private fun closeLocked(c: PooledConnection, reason: ConnectionClosedReason, error: Throwable?) {
        when (c.state) {
            ConnState.CLOSED -> return
            ConnState.PENDING -> pendingCount--
            ConnState.IN_USE -> Unit // the caller already decremented inUseCount
        }
        c.state = ConnState.CLOSED
        totalCount--
        live.remove(c)
        val sid = c.serviceId
        if (sid != null) {
            val e = serviceGenerations[sid]
            if (e != null && --e[1] == 0) serviceGenerations.remove(sid)
        }
        events.connectionClosed(c.id, reason, error)
        c.raw.close()
    }

    private fun completeWaiterWithErrorLocked(w: Waiter, reason: ConnectionCheckOutFailedReason, error: Throwable) {
        events.checkOutFailed(reason, w.startNanos, error)
        w.hand(error)
    }

    /** Creates a pending connection (no I/O) and launches its establishment on the pool's scope. */
    private fun startEstablishmentLocked(owner: Waiter?): Any {
        val id = nextId
        val now = System.nanoTime()
        val raw = try {
            connectionFactory.create(address, id, generation)
        } catch (t: Throwable) {
            // The factory must not fail (it does no I/O); if it does, the checkout gets the error.
            val e = t as? MongoServerException ?: MongoServerException("could not create connection $id to $address: $t", address, generation, false, t)
            if (owner != null) events.checkOutFailed(ConnectionCheckOutFailedReason.CONNECTION_ERROR, owner.startNanos, e)
            return e
        }
        nextId++
        val c = PooledConnection(this, raw, id, generation, now)
        totalCount++
        pendingCount++
        live.add(c)
        events.connectionCreated(id)
        val p = PendingEstablishment(c, owner)
        pendings.add(p)
        p.job = scope.launch(start = CoroutineStart.ATOMIC) { establish(p) }
        return p
    }

    private suspend fun establish(p: PendingEstablishment) {
        var error: Throwable? = null
        try {
            p.connection.raw.establish()
        } catch (t: Throwable) {
            error = t
        }
        if (error != null && !p.interrupted && poolJob.isActive) {
            if (error is CancellationException) {
                error = MongoNetworkException("establishing connection ${p.connection.id} to $address was cancelled", address, p.connection.gen, false, error)
            }
            BackpressureLabels.applyTo(error, helloCompleted = p.connection.raw.description != null)
            // SDAM hears of the error (and clears the pool) before the connection is closed and
            // before a waiting checkout fails, owned or not: the order of the SDAM unified tests
            // (PoolCleared, then ConnectionClosed, then ConnectionCheckOutFailed). The checkout's
            // own report of the same error is then stale (older generation) and changes nothing.
            callHook(p, error)
        }
        locked { finishEstablishmentLocked(p, error) }
    }

    private suspend fun callHook(p: PendingEstablishment, error: Throwable) {
        // In load-balanced mode a connection whose hello succeeded (authentication failed after it)
        // belongs to the service the hello named, at that service's current generation.
        val sid = p.connection.serviceId ?: if (loadBalanced) p.connection.raw.description?.serviceId else null
        val gen = if (loadBalanced && sid != null) locked { serviceGenerations[sid]?.get(0) ?: 0 } else p.connection.gen
        val f = EstablishmentFailure(address, p.connection.id, gen, sid, error)
        try {
            withContext(NonCancellable) { onEstablishmentError(f) }
        } catch (t: Throwable) {
            org.slf4j.LoggerFactory.getLogger(ConnectionPool::class.java).warn("the establishment error hook of the pool for {} failed", address, t)
        }
    }

    private fun finishEstablishmentLocked(p: PendingEstablishment, error: Throwable?) {
        pendings.remove(p)
        val c = p.connection
        val owner = p.owner
        if (error == null && poolState != ConnectionPoolState.CLOSED && !p.interrupted) {
            val serviceFailure = if (loadBalanced) assignServiceGenerationLocked(c) else null
            if (serviceFailure == null) {
                pendingCount--
                events.connectionReady(c.id, c.createdNanos)
                if (owner != null) {
                    markInUseLocked(c, owner.startNanos)
                    p.outcome.complete(c)
                } else {
                    c.state = ConnState.AVAILABLE
                    if (c.gen != currentGenerationLocked(c)) {
                        closeLocked(c, ConnectionClosedReason.STALE, null)
                    } else {
                        if (maxIdleNanos > 0) c.availableSinceNanos = System.nanoTime()
                        available.addLast(c)
                    }
                }
                dispatchLocked()
                // A Run ends instead of waiting for maxConnecting; resume population once a slot is free.
                if (poolState == ConnectionPoolState.READY && totalCount < settings.minPoolSize) maintenance.wake()
                return
            }
            finishFailedLocked(p, serviceFailure, ConnectionClosedReason.ERROR, ConnectionCheckOutFailedReason.CONNECTION_ERROR)
            return
        }
        when {
            poolState == ConnectionPoolState.CLOSED ->
                finishFailedLocked(p, PoolClosedException(address), ConnectionClosedReason.POOL_CLOSED, ConnectionCheckOutFailedReason.POOL_CLOSED)
            p.interrupted ->
                finishFailedLocked(
                    p,
                    PoolClearedException(address, PoolClearedException.interruptedMessage(address), error),
                    ConnectionClosedReason.STALE,
                    ConnectionCheckOutFailedReason.CONNECTION_ERROR,
                )
            else -> finishFailedLocked(p, error!!, ConnectionClosedReason.ERROR, ConnectionCheckOutFailedReason.CONNECTION_ERROR)
        }
    }

    private fun finishFailedLocked(
        p: PendingEstablishment,
        error: Throwable,
        closedReason: ConnectionClosedReason,
        failedReason: ConnectionCheckOutFailedReason,
    ) {
        closeLocked(p.connection, closedReason, if (closedReason == ConnectionClosedReason.ERROR) error else null)
        val owner = p.owner
        if (owner != null) {
            events.checkOutFailed(failedReason, owner.startNanos, error)
            p.outcome.complete(error)
        }
        dispatchLocked()
    }

    /** Load-balanced mode: the connection takes its service's generation and is counted for it. */
    private fun assignServiceGenerationLocked(c: PooledConnection): Throwable? {
        val sid = c.raw.description?.serviceId
            ?: return MongoProtocolException(
                "the load balancer at $address did not report a serviceId in the handshake reply",
                address, c.gen, false,
            )
        val e = serviceGenerations.getOrPut(sid) { IntArray(2) }
        e[1]++
        c.serviceId = sid
        c.gen = e[0]
        return null
    }

    /**
     * One maintenance run (the CMAP background thread run): closes perished available
     * connections and, while ready, starts establishments up to minPoolSize within maxConnecting.
     * Does what is readily available and returns; never waits for establishments.
     */
    internal suspend fun runMaintenance() {
        locked {
            if (poolState == ConnectionPoolState.CLOSED) return@locked
            val now = System.nanoTime()
            val it = available.iterator()
            val perished = ArrayList<Pair<PooledConnection, ConnectionClosedReason>>()
            while (it.hasNext()) {
                val c = it.next()
                val reason = perishedReasonLocked(c, now, checkIdle = true)
                if (reason != null) {
                    it.remove()
                    perished += c to reason
                }
            }
            for ((c, reason) in perished) closeLocked(c, reason, null)
            if (poolState == ConnectionPoolState.READY) {
                while (totalCount < settings.minPoolSize && canEstablishLocked()) {
                    if (startEstablishmentLocked(null) is Throwable) break
                }
            }
        }
    }
}

/** Busy-wait iterations before a contended lock attempt yields its thread (about a microsecond or two). */
private const val LOCK_SPINS = 64

/** Thread yields before a contended lock attempt queues (suspends) in the Mutex. */
private const val LOCK_YIELDS = 2

/** Marks "the critical section has not produced a result" in [ConnectionPool]'s slow lock path. */
private val NO_RESULT = Any()
