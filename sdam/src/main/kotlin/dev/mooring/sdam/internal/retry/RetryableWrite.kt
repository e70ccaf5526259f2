package dev.mooring.sdam.internal.retry

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.session.ServerSession
import dev.mooring.sdam.internal.session.ServerSessionPool
import dev.mooring.sdam.internal.topology.OperationRetry
import org.bson.BsonDocument
import org.bson.BsonInt64
import kotlin.coroutines.cancellation.CancellationException

/**
 * One retryable write (retryable-writes.md): the retry policy of its operation and the
 * command each attempt sends.
 *
 * The write is retryable when [enabled] (retryWrites), acknowledged (no `writeConcern: {w: 0}`)
 * and sent to a server that supports retryable writes (a replica set primary or mongos with
 * `logicalSessionTimeoutMinutes` and wire version 6+, or a load balancer; never a standalone).
 * Then the first attempt takes a session from [sessions] and a new txnNumber; both attempts
 * carry the same `lsid` and `txnNumber`. Retryable errors are those labelled
 * `RetryableWriteError` (the driver adds the label to network and pool-cleared errors, to
 * server errors with a retryable code that failed the handshake or authentication of the
 * connection checked out for the write, and before MongoDB 4.4 to the retryable codes), and
 * `ok: 1` replies with a retryable writeConcernError. An attempt whose checkout failed (no
 * command sent) is judged against the server its selection chose, not the topology before it
 * (which, after an error that marked the server Unknown, supports nothing). If the retry cannot select a server, goes to a server without support,
 * or fails with `NoWritesPerformed`, the first error is surfaced. A write that is not retryable
 * is never retried, not even after a pool-cleared error (an interrupted write may have been
 * applied). The retry avoids the failed server in a sharded cluster (and after a pool-cleared error).
 *
 * Per operation, used from the operation's coroutine only. [close] returns the session.
 */
internal class RetryableWrite(
    private val command: BsonDocument,
    private val enabled: Boolean,
    private val sessions: ServerSessionPool,
    /** An explicit session's server session, used instead of a pooled one (and not returned to the pool). */
    private val explicit: ServerSession? = null,
) : OperationRetry, AutoCloseable {
    private val acknowledged = !isUnacknowledged(command)
    private var session: ServerSession? = null
    private var txnNumber = 0L
    private var sessionTimeout: Int? = null
    private var attemptsRun = 0

    /**
     * Labels [error], which failed the checkout of a connection to [server] (the server selected
     * for the attempt) before any command was sent on it, `RetryableWriteError` when the write is
     * retryable there (retryable-writes.md "RetryableWriteError Labels": a network error
     * establishing a connection, a PoolClearedError during checkout; a retryable server error
     * in the handshake or authentication, see [RetryableErrors.labelWriteError]).
     */
    override fun checkOutFailed(server: ServerDescription, error: Throwable) {
        if (enabled && acknowledged && supports(server)) RetryableErrors.labelWriteError(error, null)
    }

    /**
     * The command for an attempt on [server]: with `lsid` and `txnNumber` when the write is
     * retryable. Throws [RetryNotPossible] when this is the retry and [server] has no support.
     */
    fun commandFor(server: ServerDescription, topology: TopologyDescription): BsonDocument {
        attemptsRun++
        val supported = enabled && acknowledged && supports(server)
        val s = session
        if (s == null) {
            if (!supported) return command
            sessionTimeout = topology.logicalSessionTimeoutMinutes ?: server.logicalSessionTimeoutMinutes
            val fresh = explicit ?: sessions.acquire(sessionTimeout)
            session = fresh
            txnNumber = fresh.nextTxnNumber()
        } else if (!supported) {
            throw RetryNotPossible(server.address)
        }
        sessions.markUsed(session!!)
        // appended, not copied: the encoder writes them after the command's fields
        return AppendedCommand.append(AppendedCommand.append(command, "lsid", session!!.lsid), "txnNumber", BsonInt64(txnNumber))
    }

    /**
     * The outcome of an attempt's reply on a server of [maxWireVersion]: a retryable write
     * concern error is thrown as [RetryableWriteConcernReply], its reply labelled
     * `RetryableWriteError` (before MongoDB 4.4 the driver adds the label, to a mongod's reply only,
     * not when [fromMongos]).
     */
    fun checkReply(reply: BsonDocument, maxWireVersion: Int, fromMongos: Boolean = false): BsonDocument {
        if (session == null) return reply
        val labelled = RetryableErrors.labelWriteConcernReply(reply, maxWireVersion, fromMongos)
        if (RetryableErrors.isRetryableWriteConcernError(labelled, maxWireVersion, fromMongos)) throw RetryableWriteConcernReply(labelled)
        return labelled
    }

    /** Records an attempt's [error] on a server of [maxWireVersion]: labels it, and marks the session dirty after a network error. */
    fun onError(error: Throwable, maxWireVersion: Int?) {
        val s = session ?: return
        if (error is MongoNetworkException) s.markDirty()
        RetryableErrors.labelWriteError(error, maxWireVersion)
    }

    override val retriesOverload: Boolean get() = enabled

    override fun shouldRetry(error: Throwable): Boolean {
        if (error is CancellationException || error is RetryNotPossible) return false
        if (error is RetryableWriteConcernReply) return true
        // an attempt that sent the write without a txnNumber is never retried; before any was sent,
        // [checkOutFailed] labelled what is retryable on the server selected (a failed selection is not)
        if (attemptsRun > 0 && session == null) return false
        return RetryableErrors.isRetryableWrite(error)
    }

    override fun deprioritize(error: Throwable, topology: TopologyDescription): Set<ServerAddress> {
        val address = (error as? MongoServerException)?.address ?: return emptySet()
        return if (error is PoolClearedException || topology.type == TopologyType.SHARDED) setOf(address) else emptySet()
    }

    override fun surface(firstError: Throwable, retryError: Throwable): Throwable = when {
        retryError is RetryNotPossible || RetryableErrors.isSelectionFailure(retryError) -> firstError
        RetryableErrors.noWritesPerformed(retryError) -> firstError
        else -> retryError
    }

    override fun close() {
        session?.takeIf { it !== explicit }?.let { sessions.release(it, sessionTimeout) }
        session = null
    }

    companion object {
        /** True when [server] supports retryable writes. */
        fun supports(server: ServerDescription): Boolean = when (server.type) {
            ServerType.LOAD_BALANCER -> true
            ServerType.RS_PRIMARY, ServerType.MONGOS ->
                server.logicalSessionTimeoutMinutes != null && server.maxWireVersion >= RETRYABLE_WRITES_WIRE_VERSION
            else -> false
        }

        /** True when [command] carries `writeConcern: {w: 0}`. */
        fun isUnacknowledged(command: BsonDocument): Boolean {
            val w = (command["writeConcern"] as? BsonDocument)?.get("w") ?: return false
            return w.isNumber && w.asNumber().intValue() == 0
        }

        /** MongoDB 3.6. */
        private const val RETRYABLE_WRITES_WIRE_VERSION = 6
    }
}

/** The retry of a retryable write found a server without retryable write support: the first error is surfaced. */
internal class RetryNotPossible(address: ServerAddress) :
    MooringException("cannot retry the write: $address does not support retryable writes")

/**
 * An `ok: 1` reply with a retryable writeConcernError, carried through the retry loop as an
 * error; the operation returns [reply] when this is what it ends with.
 */
internal class RetryableWriteConcernReply(val reply: BsonDocument) :
    MooringException("write concern error: ${reply["writeConcernError"]}")
