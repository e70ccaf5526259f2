package dev.mooring.cmap

import dev.mooring.cmap.internal.pool.DefaultConnectionPool
import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
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
 * A CMAP connection pool for one server (connection-monitoring-and-pooling.md). Create one with
 * the [ConnectionPool] factory function; a `MongoCluster` creates and owns one per server itself.
 * An interface so that callers can wrap or substitute it (a decorator that counts checkouts, a
 * fake in a test); the contract below is what the factory's pool guarantees and what a
 * substitute must keep.
 *
 * **Concurrency.** Every member is thread-safe and may be called from any coroutine or thread.
 *
 * **Fairness.** Checkouts that must wait (maxPoolSize or maxConnecting reached) are served
 * strictly in FIFO order; each waiter is resumed exactly once, with its connection or its error,
 * and served waiters also *run* in that order. A served checkout may resume on the thread of the
 * caller that served it (a [checkIn], an establishment, a [clear]) until it next suspends, so code
 * there must not block its thread (as in any coroutine). [withConnection] runs its block only
 * after a dispatch of its own, so a block that blocks its thread never holds up other waiters.
 *
 * **Cancellation.** Cancelling a [checkOut] at any point (waiting, while its connection is being
 * established, or after it was handed a connection but before it resumed) leaks nothing: a
 * connection already handed over is given back (a CheckedIn event balances the CheckedOut), and an
 * establishment started for it continues and goes to the oldest waiter or the available list.
 * [checkIn], [clear], [ready] and [close] complete even when their caller is cancelled.
 *
 * **Events.** The pool's CMAP events ([ConnectionPoolEvent]) are published in pool order.
 *
 * **After close.** [checkOut] fails with [PoolClosedException]; checked-in connections are
 * closed; [clear] and [ready] do nothing; [close] again does nothing.
 *
 * The states and transitions are those of `docs/architecture.md`, "The pool's states and transitions".
 */
public interface ConnectionPool {
    /** The server this pool connects to. */
    public val address: ServerAddress

    /** The pool options. */
    public val settings: ConnectionPoolSettings

    /** Load-balanced mode: per-serviceId generations, clear(serviceId) without pausing. */
    public val loadBalanced: Boolean

    /** The current state (a racy read, for diagnostics). */
    public val state: ConnectionPoolState

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
    public suspend fun checkOut(): Connection

    /**
     * Returns [connection] to the pool. It is closed when it is perished (stale, errored,
     * interrupted) or the pool is closed; otherwise it goes straight to the oldest waiter, or to
     * the available list. Never suspends for long; completes even if the caller is cancelled.
     *
     * @throws IllegalArgumentException when [connection] did not come from this pool.
     * @throws IllegalStateException when [connection] is not checked out (a double check-in).
     */
    public suspend fun checkIn(connection: Connection)

    /**
     * Records that the checked-out [connection] is now held for [purpose] (a cursor or a
     * transaction pins it; [ConnectionPurpose.OPERATION] unpins it) until it is checked in, for
     * the load-balanced wait-queue timeout message (load-balancers.md "Connection Tracking").
     * Suspends for the pool's lock only; safe from any coroutine.
     *
     * @throws IllegalStateException when [connection] is not checked out from this pool.
     */
    public suspend fun pin(connection: Connection, purpose: ConnectionPurpose)

    /**
     * Checks out a connection, runs [block] with it and always checks it back in. A command of the
     * connection that fails with an error that [MongoServerException.perishesConnection] marks it
     * perished, so it is closed on check-in. [block] runs after a dispatch of its own (see
     * "Fairness"), never on the thread that served the checkout.
     */
    public suspend fun <T> withConnection(block: suspend (Connection) -> T): T

    /**
     * Marks a checked-out [connection] perished (errored) so that it is closed when checked in,
     * for a holder that knows its wire state is unknown for a reason of its own; a command that
     * fails with a network or protocol error marks its connection by itself
     * ([MongoServerException.perishesConnection]). Non-suspending, thread-safe, idempotent.
     */
    public fun markPerished(connection: Connection)

    /**
     * Marks the pool ready (from paused): checkouts are served and minPoolSize population
     * starts. Emits PoolReady only on a real transition; a ready or closed pool is left as is.
     */
    public suspend fun ready()

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
    public suspend fun clear(interruptInUseConnections: Boolean = false, cause: Throwable? = null)

    /**
     * Clears the connections of one load-balancer service: bumps that service's generation and
     * emits PoolCleared with [serviceId]. Does not pause the pool nor touch the wait queue.
     *
     * @throws IllegalStateException when the pool is not in load-balanced mode.
     */
    public suspend fun clear(serviceId: ObjectId)

    /**
     * Closes the pool: closes the available connections, fails waiting checkouts with
     * [PoolClosedException], emits PoolClosed, stops the pool's own coroutines (establishment,
     * maintenance) and returns when they have stopped. In-use connections are closed when checked
     * in. Idempotent; completes even when the caller is cancelled.
     */
    public suspend fun close()

    /** Gauges read from the pool's own state under its lock (a consistent snapshot). */
    public suspend fun statistics(): ConnectionPoolStatistics

    /**
     * Gauges read without the lock: never blocks, may mix values from concurrent changes.
     * For metrics scrapers.
     */
    public fun statisticsSnapshot(): ConnectionPoolStatistics

    /** The current generation of [serviceId] in load-balanced mode (0 when unknown). */
    public suspend fun serviceGeneration(serviceId: ObjectId): Int
}

/**
 * A [ConnectionPool] for the server at [address] whose connections come from [connectionFactory]
 * (a `DefaultConnectionFactory` for real servers). It starts [ConnectionPoolState.PAUSED]: call
 * [ConnectionPool.ready] before checking out. PoolCreated is published on [eventBus] before this
 * returns; no connection is opened here.
 *
 * How it keeps the contract: all state lives behind one fair coroutine mutex that is never held
 * across I/O or suspension; under it the pool decides (take an idle connection, reserve an
 * establishment slot, or enqueue a waiter), then releases it. A contended caller spins briefly
 * before it queues in the mutex (FIFO; spinning never overtakes a queued caller), and a queued
 * caller's critical section runs on the thread that releases the mutex. After releasing it, the
 * caller that served waiters resumes them oldest first, one thread per pool at a time, on its own
 * thread when the waiter has the same dispatcher (no dispatch) and through a task on the waiter's
 * dispatcher otherwise. Connections are established by coroutines the pool owns, never under the
 * lock and never blocking other checkouts. Events are published under the lock.
 *
 * **Scope.** The pool owns a [SupervisorJob] child of [context]'s job (when any) running on
 * [context]'s dispatcher (default [Dispatchers.Default]); establishment coroutines and the
 * maintenance coroutine are its children. [ConnectionPool.close] cancels them and returns only
 * when they have stopped.
 *
 * @param settings the pool options.
 * @param loadBalanced load-balanced mode: per-serviceId generations, clear(serviceId) without pausing.
 * @param logging where this pool's `connection` log messages go besides SLF4J (logging.md).
 * @param onEstablishmentError called (outside the lock, on the pool's scope) with every
 *   establishment error, before the connection is closed and before the checkout waiting for
 *   it (if any) fails; SDAM uses it to handle pre-handshake errors (clear the pool, mark the
 *   server Unknown) in the order the SDAM spec tests require. It may call
 *   [ConnectionPool.clear]. Exceptions it throws are logged and ignored.
 */
public fun ConnectionPool(
    address: ServerAddress,
    settings: ConnectionPoolSettings,
    connectionFactory: ConnectionFactory,
    eventBus: EventBus = EventBus(),
    loadBalanced: Boolean = false,
    context: CoroutineContext = Dispatchers.Default,
    logging: LoggingSettings = LoggingSettings.DEFAULT,
    onEstablishmentError: suspend (EstablishmentFailure) -> Unit = {},
): ConnectionPool = DefaultConnectionPool(address, settings, connectionFactory, eventBus, loadBalanced, context, logging, onEstablishmentError)
