package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClosedException
import dev.mooring.cmap.internal.pool.CheckOutGuard
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.internal.retry.OverloadRetry
import dev.mooring.sdam.internal.retry.RetryableWriteConcernReply
import org.bson.BsonDocument
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.ContinuationInterceptor

/**
 * Internal API, not stable: runs operations against a [Topology] — selection, checkout, the
 * operation's block, SDAM error handling of whatever fails, one retry after a fresh selection
 * as the operation's [OperationRetry] allows (a pool-cleared error; retryable reads and
 * writes) or, with `timeoutMS` set (0 = no limit), as many retries as fit before its deadline
 * (client-side-operations-timeout.md "Retryability"), and the `timeoutMS` bound over all of it.
 *
 * Thread-safe. [beginClosing] makes new operations fail at once with
 * [MongoClusterClosedException] and fails operations still selecting or waiting for a
 * connection with [PoolClosedException]; operations holding a connection run on.
 * [holdingCount] counts operations holding a connection; [awaitNoneHolding] waits for it to reach 0 while closing.
 */
internal class OperationRunner(
    internal val topology: Topology,
    internal val selector: ServerSelector,
    /** The connections' event loops, where a busy operation of another dispatcher runs (see [run]); null: none. */
    private val loops: CoroutineDispatcher? = null,
) {
    /**
     * The overload retry policy (maxAdaptiveRetries, enableOverloadRetargeting from the
     * settings). Replaceable for tests (a fixed jitter) through ClusterInternals only.
     */
    @Volatile internal var overloadPolicy: OverloadRetry =
        OverloadRetry(topology.settings.maxAdaptiveRetries, topology.settings.enableOverloadRetargeting)

    /**
     * Raised by [beginClosing]: fails the operations' checkouts from then on, and its [CheckOutGuard.raised]
     * job is what selection waits observe to stop.
     */
    internal val checkOutGuard = CheckOutGuard()

    /** Operations holding a connection; an atomic counter, so the operation path takes no lock. */
    internal val holding = AtomicInteger()

    /** [holding] published as a flow once closing began (the only time anyone waits on it). */
    private val holdingAfterClosing = MutableStateFlow(0)

    /** The number of operations that hold a connection right now. */
    internal val holdingCount: Int get() = holding.get()

    /**
     * Suspends until no operation holds a connection. Only after [beginClosing] (before it, the
     * count is not published and this fails with [IllegalStateException]). Cancellable.
     */
    internal suspend fun awaitNoneHolding() {
        check(isClosing) { "awaitNoneHolding is for closing: call beginClosing first" }
        holdingAfterClosing.first { it == 0 }
    }

    /** True once [beginClosing] was called. */
    internal val isClosing: Boolean get() = checkOutGuard.isRaised

    /** Refuses new operations and fails those not yet holding a connection. Idempotent, non-blocking. */
    internal fun beginClosing() {
        checkOutGuard.raise()
        publishHolding()
    }

    /** After [beginClosing]: fails the operations' checkouts waiting in the queues of [pools]. */
    internal suspend fun failWaitingCheckouts(pools: Collection<ConnectionPool>) {
        for (pool in pools) checkOutGuard.failWaiting(pool)
    }

    /**
     * Publishes [holding] to [holdingAfterClosing] once closing began. Under a lock, each
     * publication reads the counter afresh, so the last one after the last change always publishes
     * the final count.
     */
    internal fun publishHolding() {
        if (!isClosing) return
        synchronized(holdingAfterClosing) { holdingAfterClosing.value = holding.get() }
    }

    /**
     * Runs [block] with a connection to a server selected for [operation] ([operationName]
     * is the command name for logs) under the retry policy [retry]: at most one retry (more
     * under a timeoutMS, see [attempts]), after a fresh selection, within [timeoutMS] when not
     * null. Errors from checkout and from [block] go through SDAM error handling before they
     * propagate,
     * and so does a `writeConcernError` in the command reply [reply] says the result is.
     *
     * Inline, as [once] is into [attempts]: the operation costs the caller's frame, one frame for
     * [attempts] (selection, checkout, error handling and retries all run in it) and [block]'s.
     * [attempts] itself is not inline: inlined into each operation it would make the callers'
     * methods larger than HotSpot compiles (8,000 bytes of bytecode), and they would run
     * interpreted.
     */
    internal suspend inline fun <T> run(
        operation: ServerSelectionOperation,
        operationName: String,
        timeoutMS: Long?,
        retry: OperationRetry,
        reply: AttemptReply<T>,
        mayRunOnLoops: Boolean = false,
        noinline block: suspend (SelectedServer, Connection) -> T,
    ): T {
        if (isClosing || topology.isClosed) throw refused(operationName)
        // [block] is passed on as it is: an object implementing the function type (as the ping's
        // path does) then costs one object and its frame, where a lambda costs its instance and a
        // copy of it per invocation.
        if (mayRunOnLoops && loops != null && holding.get() > 0 && currentCoroutineContext()[ContinuationInterceptor] !== loops) {
            return onLoops(loops, operation, operationName, timeoutMS, retry, reply, block)
        }
        if (timeoutMS == null || timeoutMS <= 0) return attempts(operation, operationName, null, timeoutMS != null, retry, reply, block)
        return runWithin(operation, operationName, timeoutMS, retry, reply, block)
    }

    /**
     * [run] on [loops] for a caller of another dispatcher while other operations hold connections
     * (only for operations whose block runs no caller's code, `mayRunOnLoops`: a loop's thread
     * must never block, and a caller's block might):
     * one dispatch there and one back, instead of a wake-up of the loop to watch for the reply and a
     * dispatch of the reply, and the pool's hand-overs between waiting operations happen on the
     * loops. A lone operation stays on its caller's thread: with the loops idle the two dispatches
     * cost more than they save (bench/README, issue 20 part 5, has the figures of both). The
     * loops being closed meanwhile fails the operation as a closed cluster, not as a cancellation.
     */
    internal suspend fun <T> onLoops(
        loops: CoroutineDispatcher,
        operation: ServerSelectionOperation,
        operationName: String,
        timeoutMS: Long?,
        retry: OperationRetry,
        reply: AttemptReply<T>,
        block: suspend (SelectedServer, Connection) -> T,
    ): T {
        try {
            return withContext(loops) {
                if (timeoutMS == null || timeoutMS <= 0) attempts(operation, operationName, null, timeoutMS != null, retry, reply, block)
                else runWithin(operation, operationName, timeoutMS, retry, reply, block)
            }
        } catch (e: CancellationException) {
            currentCoroutineContext().ensureActive() // the caller's own cancellation
            if (isClosing || topology.isClosed) throw refused(operationName)
            throw e
        }
    }

    internal fun refused(operationName: String): MongoClusterClosedException = MongoClusterClosedException("the cluster is closed; operation $operationName was refused")

    /** [run] under a positive [limit] (timeoutMS): the attempts within a `withTimeout`, its expiry as [MongoOperationTimeoutException]. */
    internal suspend fun <T> runWithin(
        operation: ServerSelectionOperation,
        operationName: String,
        limit: Long,
        retry: OperationRetry,
        reply: AttemptReply<T>,
        block: suspend (SelectedServer, Connection) -> T,
    ): T {
        val deadline = System.nanoTime() + limit * 1_000_000
        try {
            return withTimeout(limit) { attempts(operation, operationName, deadline, true, retry, reply, block) }
        } catch (e: TimeoutCancellationException) {
            currentCoroutineContext().ensureActive() // an outer cancellation is not ours to translate
            throw MongoOperationTimeoutException("operation $operationName exceeded timeoutMS=$limit ms", e)
        }
    }

    /**
     * The attempts of one operation: the first, then retries while [retry] accepts the error
     * (at most one; with [untilTimeout], i.e. timeoutMS set, 0 included, as many as fit before
     * the deadline, client-side-operations-timeout.md "Retryability"), or while the error is a
     * retryable overload error and [retry] allows overload retries (client-backpressure.md, see
     * [OverloadRetry]); once any attempt failed with an overload error the retries are capped at
     * maxAdaptiveRetries (also under timeoutMS, as client-backpressure.md says), and a retry
     * after an overload error waits its backoff first (failing at once when the backoff would
     * pass the timeoutMS deadline). The error surfaced is [OperationRetry.surface] of the first
     * and the last error.
     */
    internal suspend fun <T> attempts(
        operation: ServerSelectionOperation,
        operationName: String,
        deadline: Long?,
        untilTimeout: Boolean,
        retry: OperationRetry,
        reply: AttemptReply<T>,
        block: suspend (SelectedServer, Connection) -> T,
    ): T {
        var first: Throwable? = null
        var deprioritized = emptySet<ServerAddress>()
        var retries = 0
        var allowed = if (untilTimeout) Int.MAX_VALUE else 1
        while (true) {
            val error = try {
                return once(operation, operationName, deadline, deprioritized, retry, reply, block)
            } catch (e: Throwable) {
                if (e is CancellationException) throw e
                e
            }
            if (first == null) first = error
            val firstError: Throwable = first
            if (isClosing) throw surfaced(retry, firstError, error)
            val overload = OverloadRetry.isOverload(error)
            val overloadRetry = retry.retriesOverload && OverloadRetry.isRetryableOverload(error)
            if (!retry.shouldRetry(error) && !overloadRetry) throw surfaced(retry, firstError, error)
            retries++
            if (overload) allowed = overloadPolicy.maxRetries
            if (retries > allowed) throw surfaced(retry, firstError, error)
            deprioritized = retry.deprioritize(error, topology.current)
            val retargetFrom = if (overloadRetry && overloadPolicy.retarget) (error as? MongoServerException)?.address else null
            if (retargetFrom != null) deprioritized = deprioritized + retargetFrom
            if (overload) {
                val backoff = overloadPolicy.backoffMillis(retries, error)
                if (deadline != null && System.nanoTime() + backoff * 1_000_000 > deadline) throw surfaced(retry, firstError, error)
                delay(backoff)
            }
        }
    }

    /** The error to fail with: [retry]'s choice between the first and the last error, the other attached as suppressed. */
    internal fun surfaced(retry: OperationRetry, firstError: Throwable, error: Throwable): Throwable {
        if (firstError === error) return error
        val chosen = retry.surface(firstError, error)
        val other = if (chosen === error) firstError else error
        if (other !== chosen) chosen.addSuppressed(other)
        return chosen
    }

    internal suspend inline fun <T> once(
        operation: ServerSelectionOperation,
        operationName: String,
        deadline: Long?,
        deprioritized: Set<ServerAddress>,
        retry: OperationRetry,
        reply: AttemptReply<T>,
        block: suspend (SelectedServer, Connection) -> T,
    ): T {
        val selectionTimeout = topology.settings.serverSelectionTimeoutMS
        val remaining = deadline?.let { ((it - System.nanoTime()) / 1_000_000).coerceAtLeast(0) }
        val byOperationTimeout = remaining != null && remaining < selectionTimeout
        if (isClosing) throw closingError(null)
        // The selector's own wait observes closing: a selection that needs no wait costs nothing extra.
        val selected = selector.select(
            operation, operationName, if (byOperationTimeout) remaining!! else selectionTimeout, deprioritized, byOperationTimeout,
            closing = checkOutGuard.raised,
        )
        try {
            val pool = selected.pool
            val address = selected.description.address
            // a pinned connection (load-balanced mode: the session's transaction's) is used as it is, not checked out
            val pin = currentCoroutineContext()[ConnectionPin]
            // An establishment error reached SDAM from the pool already (before the checkout failed).
            val connection = pin?.connectionOf(pool) ?: try {
                checkOutUnlessClosing(pool, address)
            } catch (e: Throwable) {
                if (e !is CancellationException) retry.checkOutFailed(selected.description, e)
                throw e
            }
            holding.incrementAndGet()
            publishHolding()
            try {
                val result = block(selected, connection)
                reply.replyOf(result)?.let { onWriteConcernError(address, it, connection) }
                return result
            } catch (e: Throwable) {
                if (e is RetryableWriteConcernReply) onWriteConcernError(address, e.reply, connection)
                topology.onAttemptFailure(address, connection, e)
                throw e
            } finally {
                holding.decrementAndGet()
                publishHolding()
                if (pin?.connection !== connection) keepOrCheckIn(pin, selected, connection)
            }
        } finally {
            selected.release()
        }
    }

    /**
     * After an attempt on a checked-out [connection]: a transaction's [pin] in load-balanced mode
     * keeps it when it is the transaction's first (load-balancers.md "Behaviour With Transactions",
     * counted as in use by a transaction), otherwise it goes back to the pool.
     */
    internal suspend fun keepOrCheckIn(pin: ConnectionPin?, selected: SelectedServer, connection: Connection) {
        if (pin != null && pin.transaction && selected.topology.type == TopologyType.LOAD_BALANCED && pin.adopts(connection, selected.pool)) {
            selected.pool.pin(connection, ConnectionPurpose.TRANSACTION)
        } else {
            selected.pool.checkIn(connection)
        }
    }

    /**
     * SDAM error handling of a reply that succeeded but carries a `writeConcernError` (a state
     * change error there, e.g. ShutdownInProgress, marks the server Unknown like an `ok: 0`).
     */
    internal suspend fun onWriteConcernError(address: ServerAddress, reply: BsonDocument, connection: Connection) {
        if (!reply.containsKey("writeConcernError")) return
        val error = ApplicationError.fromCommandResponse(address, reply, connection.generation, true, connection.description?.serviceId) ?: return
        topology.onApplicationError(error)
    }

    /**
     * Checks out a connection unless closing begins first; then the checkout fails with
     * [PoolClosedException], including one that waits in the pool's queue or for its connection's
     * establishment ([checkOutGuard], which [beginClosing] raises and [failWaitingCheckouts]
     * applies). No job, handler or frame per checkout.
     */
    @Suppress("NOTHING_TO_INLINE") // inline: no frame of its own (it runs in the operation's)
    internal suspend inline fun checkOutUnlessClosing(pool: ConnectionPool, address: ServerAddress): Connection {
        if (isClosing) throw closingError(address)
        return checkOutGuard.checkOut(pool)
    }

    internal fun closingError(address: ServerAddress?): Exception =
        if (address != null) PoolClosedException(address) else MongoClusterClosedException("the cluster is closing")

}
