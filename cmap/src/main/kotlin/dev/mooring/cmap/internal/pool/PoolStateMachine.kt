package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionClosedReason
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionPoolState
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.MongoProtocolException
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.PoolClosedException
import dev.mooring.cmap.WaitQueueTimeoutException
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.Job
import org.bson.types.ObjectId

/**
 * The CMAP pool's state and every transition of it (connection-monitoring-and-pooling.md): the
 * pool states ([ConnectionPoolState]: PAUSED → READY → CLOSED, clear back to PAUSED), the
 * connection states ([ConnState]: PENDING → AVAILABLE ⇄ IN_USE → CLOSED), the wait queue, the
 * establishments in progress and, in load-balanced mode, the per-service generations.
 *
 * **Not thread-safe:** every member runs with the pool's [PoolLock] held and never suspends nor
 * does I/O. Transitions decide and record (emitting their events in pool order); what must
 * happen outside the lock (awaiting a waiter, establishing a connection, interrupting sockets)
 * is returned as a sealed outcome or started through [launchEstablishment] (which only launches)
 * and [wakeMaintenance] (which never suspends).
 */
internal class PoolStateMachine(
    private val address: ServerAddress,
    private val settings: ConnectionPoolSettings,
    private val loadBalanced: Boolean,
    private val connectionFactory: ConnectionFactory,
    private val events: PoolEventEmitter,
    private val launchEstablishment: (PendingEstablishment) -> Job,
    private val wakeMaintenance: () -> Unit,
    private val served: ServedWaiters,
) {
    private val maxIdleNanos = settings.maxIdleTimeMS * 1_000_000
    private val maxPool = if (settings.maxPoolSize == 0) Int.MAX_VALUE else settings.maxPoolSize

    /** The pool state (racy reads without the lock are for diagnostics). */
    @Volatile var state = ConnectionPoolState.PAUSED
        private set
    private var generation = 0
    private var nextId = 1L
    private var clearCause: Throwable? = null
    private val available = ArrayDeque<PooledConnection>() // LIFO at the end, oldest first
    private val waiters = WaitQueue()
    private val live = HashSet<PooledConnection>() // every non-closed connection, pending included
    private val pendings = LinkedHashSet<PendingEstablishment>() // oldest first
    private val counters = PoolCounters()
    private val serviceGenerations = HashMap<ObjectId, IntArray>() // serviceId -> [generation, connectionCount]

    // ---- checkOut ------------------------------------------------------------------------------

    /**
     * checkOut: an idle connection (now in use), or a [Waiter] that is queued, or already owns a
     * new establishment (or an unowned one it adopted); [Failed] when the pool is not ready, or
     * [guard] (when any) is raised.
     */
    fun checkOut(start: Long, guard: CheckOutGuard? = null): CheckOutOutcome {
        events.checkOutStarted()
        when (state) {
            ConnectionPoolState.CLOSED -> return checkOutFailed(ConnectionCheckOutFailedReason.POOL_CLOSED, start, PoolClosedException(address))
            ConnectionPoolState.PAUSED -> return checkOutFailed(ConnectionCheckOutFailedReason.CONNECTION_ERROR, start, pausedError())
            ConnectionPoolState.READY -> Unit
        }
        if (guard != null && guard.isRaised) return checkOutFailed(ConnectionCheckOutFailedReason.POOL_CLOSED, start, PoolClosedException(address))
        if (waiters.isEmpty()) {
            val c = takeAvailable(start)
            if (c != null) {
                markInUse(c, start)
                return c
            }
        }
        val waiter = Waiter(start, guard)
        if (!waiters.isEmpty() || !serve { waiter }) waiters.addLast(waiter)
        return waiter
    }

    /** waitQueueTimeoutMS elapsed for [w]: it leaves the queue and fails, unless it was handed something meanwhile. */
    fun waitTimedOut(w: Waiter): Handed =
        if (waiters.remove(w)) checkOutFailed(ConnectionCheckOutFailedReason.TIMEOUT, w.startNanos, waitQueueTimeout()) else w.outcome!!

    /** A cancelled checkout leaves the queue, or gives back what it was handed. */
    fun abandon(w: Waiter) {
        if (waiters.remove(w)) return
        when (val r = w.outcome ?: return) {
            is PooledConnection -> giveBack(r)
            is PendingEstablishment -> disown(r)
            is Failed -> Unit
        }
    }

    /**
     * The owner of [p] was cancelled: the connection, if already handed over, is checked back in;
     * otherwise the establishment continues for nobody and the oldest waiter adopts it.
     */
    fun disown(p: PendingEstablishment) {
        if (p.outcome.isCompleted) {
            val o = p.outcome.getCompleted()
            if (o is PooledConnection) giveBack(o)
        } else {
            p.owner = null
            dispatch()
        }
    }

    /**
     * The guard of [w], which owns the establishment [p], was raised (the cluster is closing): the
     * establishment's outcome when it has one by now (its events were emitted); otherwise [p] goes
     * on for nobody (the oldest waiter adopts it) and the checkout fails with [PoolClosedException]
     * (ConnectionCheckOutFailed, reason poolClosed).
     */
    fun establishmentRefused(p: PendingEstablishment, w: Waiter): Established {
        if (p.outcome.isCompleted) return p.outcome.getCompleted()
        p.owner = null
        dispatch()
        return checkOutFailed(ConnectionCheckOutFailedReason.POOL_CLOSED, w.startNanos, PoolClosedException(address))
    }

    private fun giveBack(c: PooledConnection) {
        if (c.state == ConnState.IN_USE) checkIn(c)
    }

    // ---- checkIn and pinning ---------------------------------------------------------------------

    /** checkIn: [c] is closed when perished or the pool is closed, else goes to the oldest waiter or the available list. */
    fun checkIn(c: PooledConnection) {
        check(c.state == ConnState.IN_USE) { "connection ${c.id} to $address is not checked out (double check-in?)" }
        events.checkedIn(c.id)
        val reason = if (state == ConnectionPoolState.CLOSED) ConnectionClosedReason.POOL_CLOSED else perishedReason(c, 0L, checkIdle = false)
        if (reason != null) close(c, reason, null) else makeAvailable(c)
        dispatch()
    }

    /** Records what the holder of the checked-out [c] keeps it for (load-balanced connection tracking). */
    fun pin(c: PooledConnection, purpose: ConnectionPurpose) {
        check(c.state == ConnState.IN_USE) { "connection ${c.id} to $address is not checked out" }
        counters.repurpose(c, purpose)
    }

    // ---- pool states: ready, clear, close ----------------------------------------------------------

    /** ready: PAUSED → READY (PoolReady); false when the pool was not paused. */
    fun ready(): Boolean {
        if (state != ConnectionPoolState.PAUSED) return false
        state = ConnectionPoolState.READY
        events.poolReady()
        dispatch()
        return true
    }

    /**
     * clear: bumps the generation, READY/PAUSED → PAUSED (PoolCleared when it was ready), fails
     * every waiter; with [interruptInUseConnections], returns the in-use connections and
     * establishments of older generations to interrupt.
     */
    fun clear(interruptInUseConnections: Boolean, cause: Throwable?): ClearOutcome {
        if (state == ConnectionPoolState.CLOSED) return ClearOutcome.Ignored
        val wasReady = state == ConnectionPoolState.READY
        val oldGeneration = generation
        generation++
        state = ConnectionPoolState.PAUSED
        clearCause = cause
        if (wasReady) events.poolCleared(null, interruptInUseConnections)
        waiters.drain { w -> w.hand(served, checkOutFailed(ConnectionCheckOutFailedReason.CONNECTION_ERROR, w.startNanos, pausedError())) }
        if (!interruptInUseConnections) return ClearOutcome.Cleared(emptyList(), emptyList())
        val connections = live.filter { it.state == ConnState.IN_USE && it.gen <= oldGeneration }
        val establishments = pendings.filter { it.connection.gen <= oldGeneration }
        for (p in establishments) p.interrupted = true
        return ClearOutcome.Cleared(connections, establishments)
    }

    /** clear(serviceId) (load-balanced): bumps that service's generation (PoolCleared); false when closed. */
    fun clear(serviceId: ObjectId): Boolean {
        if (state == ConnectionPoolState.CLOSED) return false
        serviceGenerations[serviceId]?.let { it[0]++ }
        events.poolCleared(serviceId, false)
        return true
    }

    /** close: → CLOSED (PoolClosed), closes available connections, fails waiters; returns the establishments to cancel. */
    fun close(): List<PendingEstablishment> {
        if (state == ConnectionPoolState.CLOSED) return emptyList()
        state = ConnectionPoolState.CLOSED
        while (available.isNotEmpty()) close(available.removeLast(), ConnectionClosedReason.POOL_CLOSED, null)
        waiters.drain { w -> w.hand(served, checkOutFailed(ConnectionCheckOutFailedReason.POOL_CLOSED, w.startNanos, PoolClosedException(address))) }
        events.poolClosed()
        return pendings.toList()
    }

    /** The waiters that checked out through [guard] (now raised) leave the queue and fail with [PoolClosedException]; the others keep their places. */
    fun failGuarded(guard: CheckOutGuard) {
        waiters.removeWhere({ it.guard === guard }) { w ->
            w.hand(served, checkOutFailed(ConnectionCheckOutFailedReason.POOL_CLOSED, w.startNanos, PoolClosedException(address)))
        }
    }

    // ---- establishing ------------------------------------------------------------------------------

    /** Creates a PENDING connection (no I/O) and launches its establishment; [Failed] when the factory threw. */
    private fun startEstablishment(owner: Waiter?): Handed {
        val id = nextId
        val now = System.nanoTime()
        val raw = try {
            connectionFactory.create(address, id, generation)
        } catch (t: Throwable) {
            // The factory must not fail (it does no I/O); if it does, the checkout gets the error.
            val e = t as? MongoServerException ?: MongoServerException("could not create connection $id to $address: $t", address, generation, false, t)
            if (owner != null) events.checkOutFailed(ConnectionCheckOutFailedReason.CONNECTION_ERROR, owner.startNanos, e)
            return Failed(e)
        }
        nextId++
        val c = PooledConnection(this, raw, id, generation, now)
        counters.created(c)
        live.add(c)
        events.connectionCreated(id)
        val p = PendingEstablishment(c, owner)
        pendings.add(p)
        p.job = launchEstablishment(p)
        return p
    }

    /**
     * The establishment of [p] ended ([error] null on success): the connection goes to its owner,
     * or is available (closed when stale); on failure, interruption or close it is closed and the
     * owner fails. Then waiters are served.
     */
    fun establishmentFinished(p: PendingEstablishment, error: Throwable?) {
        pendings.remove(p)
        val failure = when {
            state == ConnectionPoolState.CLOSED -> EstablishmentEnd(PoolClosedException(address), ConnectionClosedReason.POOL_CLOSED, ConnectionCheckOutFailedReason.POOL_CLOSED)
            p.interrupted -> EstablishmentEnd(
                PoolClearedException(address, PoolClearedException.interruptedMessage(address), error),
                ConnectionClosedReason.STALE,
                ConnectionCheckOutFailedReason.CONNECTION_ERROR,
            )
            error != null -> EstablishmentEnd(error, ConnectionClosedReason.ERROR, ConnectionCheckOutFailedReason.CONNECTION_ERROR)
            else -> assignServiceGeneration(p.connection)?.let { EstablishmentEnd(it, ConnectionClosedReason.ERROR, ConnectionCheckOutFailedReason.CONNECTION_ERROR) }
        }
        if (failure == null) established(p) else establishmentFailed(p, failure)
        dispatch()
        // A Run ends instead of waiting for maxConnecting; resume population once a slot is free.
        if (failure == null && state == ConnectionPoolState.READY && counters.total < settings.minPoolSize) wakeMaintenance()
    }

    private fun established(p: PendingEstablishment) {
        val c = p.connection
        val owner = p.owner
        counters.moveTo(c, ConnState.AVAILABLE)
        events.connectionReady(c.id, c.createdNanos)
        if (owner != null) {
            markInUse(c, owner.startNanos)
            p.outcome.complete(c)
        } else if (c.gen != currentGeneration(c)) {
            close(c, ConnectionClosedReason.STALE, null)
        } else {
            makeAvailable(c)
        }
    }

    /** Why an establishment did not yield a connection. */
    private class EstablishmentEnd(
        val error: Throwable,
        val closedReason: ConnectionClosedReason,
        val failedReason: ConnectionCheckOutFailedReason,
    )

    private fun establishmentFailed(p: PendingEstablishment, end: EstablishmentEnd) {
        close(p.connection, end.closedReason, if (end.closedReason == ConnectionClosedReason.ERROR) end.error else null)
        val owner = p.owner ?: return
        p.outcome.complete(checkOutFailed(end.failedReason, owner.startNanos, end.error))
    }

    /** Load-balanced mode: the connection takes its service's generation and is counted for it; the error when the hello named none. */
    private fun assignServiceGeneration(c: PooledConnection): Throwable? {
        if (!loadBalanced) return null
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

    /** The current generation of [serviceId] in load-balanced mode (0 when unknown). */
    fun serviceGeneration(serviceId: ObjectId): Int = serviceGenerations[serviceId]?.get(0) ?: 0

    // ---- maintenance -------------------------------------------------------------------------------

    /**
     * One maintenance run (the CMAP background thread run): closes perished available
     * connections and, while ready, starts establishments up to minPoolSize within maxConnecting.
     */
    fun maintain() {
        if (state == ConnectionPoolState.CLOSED) return
        val now = System.nanoTime()
        val it = available.iterator()
        val perished = ArrayList<Pair<PooledConnection, ConnectionClosedReason>>()
        while (it.hasNext()) {
            val c = it.next()
            val reason = perishedReason(c, now, checkIdle = true)
            if (reason != null) {
                it.remove()
                perished += c to reason
            }
        }
        for ((c, reason) in perished) close(c, reason, null)
        if (state == ConnectionPoolState.READY) {
            while (counters.total < settings.minPoolSize && canEstablish()) {
                if (startEstablishment(null) is Failed) break
            }
        }
    }

    // ---- gauges ------------------------------------------------------------------------------------

    /** The gauges (a consistent snapshot under the lock; racy without it). */
    fun statistics() = ConnectionPoolStatistics(
        state = state,
        totalConnections = counters.total,
        availableConnections = available.size,
        pendingConnections = counters.pending,
        inUseConnections = counters.inUse,
        waitQueueSize = waiters.size,
        generation = generation,
        pinnedToCursors = counters.pinnedToCursors,
    )

    // ---- shared steps ------------------------------------------------------------------------------

    /** Serves waiters, oldest first, while a connection is available or one may be established. */
    private fun dispatch() {
        if (state != ConnectionPoolState.READY) return
        while (!waiters.isEmpty()) {
            if (!serve { waiters.pollFirst()!! }) return
        }
    }

    /**
     * Hands the waiter [next] yields (taken only when it is served) an available connection, an
     * unowned establishment to adopt (it will be ready sooner and saves a connection), or a new
     * establishment (or the factory's error); false when none is possible (maxPoolSize or
     * maxConnecting reached).
     */
    private inline fun serve(next: () -> Waiter): Boolean {
        // The clock is read only when idle connections can expire: a hand-over reads no clock otherwise.
        val c = takeAvailable(if (maxIdleNanos > 0) System.nanoTime() else 0L)
        if (c != null) {
            val w = next()
            markInUse(c, w.startNanos)
            w.hand(served, c)
            return true
        }
        val adoptable = unownedPending()
        if (adoptable != null) {
            val w = next()
            adoptable.owner = w
            w.hand(served, adoptable)
            return true
        }
        if (!canEstablish()) return false
        val w = next()
        w.hand(served, startEstablishment(w))
        return true
    }

    /** A current-generation establishment owned by nobody (minPoolSize population, or its checkout was cancelled). */
    private fun unownedPending(): PendingEstablishment? {
        if (pendings.isEmpty()) return null // no iterator (32 bytes) on every hand-over of a full pool
        for (p in pendings) {
            if (p.owner == null && !p.interrupted && (loadBalanced || p.connection.gen == generation)) return p
        }
        return null
    }

    private fun canEstablish(): Boolean = counters.total < maxPool && counters.pending < settings.maxConnecting

    private fun takeAvailable(now: Long): PooledConnection? {
        while (available.isNotEmpty()) {
            val c = available.removeLast()
            val reason = perishedReason(c, now, checkIdle = true) ?: return c
            close(c, reason, null)
        }
        return null
    }

    private fun makeAvailable(c: PooledConnection) {
        counters.moveTo(c, ConnState.AVAILABLE)
        if (maxIdleNanos > 0) c.availableSinceNanos = System.nanoTime()
        available.addLast(c)
    }

    private fun markInUse(c: PooledConnection, startNanos: Long) {
        counters.moveTo(c, ConnState.IN_USE)
        events.checkedOut(c.id, startNanos)
    }

    private fun close(c: PooledConnection, reason: ConnectionClosedReason, error: Throwable?) {
        if (c.state == ConnState.CLOSED) return
        counters.moveTo(c, ConnState.CLOSED)
        live.remove(c)
        val sid = c.serviceId
        if (sid != null) {
            val e = serviceGenerations[sid]
            if (e != null && --e[1] == 0) serviceGenerations.remove(sid)
        }
        events.connectionClosed(c.id, reason, error)
        c.raw.close()
    }

    private fun perishedReason(c: PooledConnection, now: Long, checkIdle: Boolean): ConnectionClosedReason? = when {
        c.errored -> ConnectionClosedReason.ERROR // a connection that failed is closed for its error, even when the pool was cleared since
        c.gen != currentGeneration(c) || c.interrupted -> ConnectionClosedReason.STALE
        c.raw.isClosed -> ConnectionClosedReason.ERROR
        checkIdle && maxIdleNanos > 0 && now - c.availableSinceNanos > maxIdleNanos -> ConnectionClosedReason.IDLE
        else -> null
    }

    private fun currentGeneration(c: PooledConnection): Int {
        if (!loadBalanced) return generation
        val sid = c.serviceId ?: return c.gen
        return serviceGeneration(sid)
    }

    private fun checkOutFailed(reason: ConnectionCheckOutFailedReason, start: Long, error: Throwable): Failed {
        events.checkOutFailed(reason, start, error)
        return Failed(error)
    }

    private fun pausedError() = PoolClearedException(address, PoolClearedException.clearedMessage(address, clearCause), clearCause)

    /** The wait-queue timeout error: in load-balanced mode with the spec's detailed message. */
    private fun waitQueueTimeout(): WaitQueueTimeoutException {
        if (!loadBalanced) return WaitQueueTimeoutException(address, settings.waitQueueTimeoutMS)
        val message = WaitQueueTimeoutException.loadBalancedMessage(
            settings.maxPoolSize, counters.pinnedToCursors, counters.pinnedToTransactions, counters.inUseForOperations,
        )
        return WaitQueueTimeoutException(address, settings.waitQueueTimeoutMS, message)
    }
}
