package dev.mooring.sdam.internal.session

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoSessionNotSupportedException
import dev.mooring.sdam.MongoTransactionStateException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.internal.retry.RetryableErrors
import dev.mooring.sdam.internal.topology.ConnectionPin
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.withContext
import org.bson.BsonDocument

/**
 * Internal API, not stable: the session of one operation (or one cursor) — the explicit
 * session's [ServerSession], or an implicit one taken from [pool] after the first checkout of a
 * connection that supports sessions (driver-sessions.md, "Sessions and Connections").
 * [timeoutMinutes] gives the topology's `logicalSessionTimeoutMinutes` for the pool (null in
 * load-balanced mode). [clusterClock] is the explicit session's cluster time (null for an
 * implicit session), gossiped with the cluster's. [onRelease] runs once, at [release] (an
 * explicit session's hold ends). [client] is the explicit session itself: its commands get
 * the transaction, causal consistency and snapshot fields ([SessionCommandFields]), and
 * [inTransaction] tells whether the operation runs in its transaction (decided when the
 * operation starts: an operation outside a transaction forgets an ended one). Used from the
 * operation's coroutine only; [release] is idempotent.
 */
internal class OperationSession(
    private val pool: ServerSessionPool,
    private val explicit: ServerSession?,
    private val timeoutMinutes: () -> Int?,
    val clusterClock: ClusterClock? = null,
    private val onRelease: () -> Unit = {},
    private val client: ClientSession? = null,
    /** True for `commitTransaction` and `abortTransaction`, which end [client]'s transaction. */
    endsTransaction: Boolean = false,
    /**
     * True for a command of the generic `runCommand`: outside a transaction causal-consistency.md
     * says such commands MUST NOT get `afterClusterTime` (as they get no read concern from the driver).
     */
    private val generic: Boolean = false,
) {
    /** The span of [client]'s running transaction, when the cluster traces ([dev.mooring.sdam.internal.tracing.TransactionSpan]). */
    val transactionSpan: dev.mooring.sdam.internal.tracing.TransactionSpan? get() = client?.transaction?.span

    /** True when the operation runs in [client]'s transaction (or ends it: commit, abort). */
    val inTransaction: Boolean = client != null && (endsTransaction || client.transaction.isActive)

    init {
        if (client != null && !inTransaction) client.transaction.operationOutside()
    }

    private var implicit: ServerSession? = null
    private var released = false
    private var decided = false

    /** The server session in use, if any (explicit, or implicit once acquired). */
    val current: ServerSession? get() = explicit ?: implicit

    /**
     * [command] with this session's `lsid` for [connection], or [command] itself when the
     * connection does not support sessions and the session is implicit (an implicit session's
     * id is never sent to such a server, not even by a retry or a getMore after a connection that
     * supports them). Throws [MongoSessionNotSupportedException] for an explicit session on such
     * a connection. Records the server session's last use (driver-sessions.md `lastUse`).
     */
    fun attach(command: BsonDocument, connection: Connection): BsonDocument {
        val session = when {
            explicit != null -> if (supportsSessions(connection)) explicit else throw MongoSessionNotSupportedException(connection.address)
            decided -> implicit?.takeIf { supportsSessions(connection) }
            else -> {
                // the first connection decides for the whole operation: a cursor's getMores send the lsid its command sent
                decided = true
                if (supportsSessions(connection) && !released) pool.acquire(timeoutMinutes()).also { implicit = it } else null
            }
        } ?: return command
        pool.markUsed(session)
        return sessionFields(AppendedCommand.append(command, "lsid", session.lsid), connection) // appended, not copied (see AppendedCommand)
    }

    /** [command] (carrying this session's `lsid`) with the explicit session's fields ([SessionCommandFields]); as is for an implicit session. */
    fun sessionFields(command: BsonDocument, connection: Connection): BsonDocument {
        val c = client ?: return command
        return SessionCommandFields.apply(command, c.transaction, c.clock, c.options.isCausallyConsistent, c.options.snapshot, connection, generic)
    }

    /**
     * The selection of an operation in [client]'s transaction, or null outside one: the pinned
     * mongos when pinned, else the primary (a [write], or a read by the transaction's read
     * preference, which must be primary: transactions.md, [MongoTransactionStateException] otherwise).
     */
    fun transactionSelection(write: Boolean): ServerSelectionOperation? {
        if (!inTransaction) return null
        val txn = client!!.transaction
        txn.pinned?.let { return ServerSelectionOperation.Pinned(it) }
        if (write) return ServerSelectionOperation.Write
        val rp = txn.options.readPreference ?: ReadPreference.PRIMARY
        if (rp.mode != ReadPreferenceMode.PRIMARY) throw MongoTransactionStateException("read preference in a transaction must be primary, was ${rp.mode.value}")
        return READ_PRIMARY
    }

    /**
     * Runs [block] (the operation's runner call) on [client]'s transaction's connection pin when
     * the operation runs in its transaction (load-balanced mode: the transaction's commands share
     * one connection, see [Transaction.connection]); as is otherwise.
     */
    suspend inline fun <T> onTransactionConnection(crossinline block: suspend () -> T): T {
        val pin = transactionPin ?: return block()
        return withContext(pin) { block() }
    }

    /** [client]'s transaction's connection pin when the operation runs in its transaction, else null. */
    val transactionPin: ConnectionPin? get() = if (inTransaction) client!!.transaction.connection else null

    /**
     * [error], the operation's, with the labels of a transaction (transactions.md "Transient
     * Transaction Error"): a network error, a server selection error or a PoolClearedError inside
     * a transaction is labelled `TransientTransactionError` (commitTransaction's are not: its
     * outcome may be unknown, see `EndTransactionOperation`), and an error so labelled unpins the
     * session. Returns [error].
     */
    fun failed(error: Throwable, commit: Boolean = false): Throwable {
        if (!inTransaction || error !is MooringException) return error
        val transient = error is MongoNetworkException || error is PoolClearedException || RetryableErrors.isSelectionFailure(error)
        if (!commit && transient) error.addErrorLabel(TRANSIENT_TRANSACTION_ERROR)
        if (error.hasErrorLabel(TRANSIENT_TRANSACTION_ERROR)) client!!.transaction.unpin()
        return error
    }

    /**
     * Records the [error] of a command sent in this session: a network error, or a command
     * interrupted while in flight (timeoutMS expiring mid-command, a socket timeout in effect, or
     * the caller's cancellation), marks the server session dirty (driver-sessions.md: the server's
     * view of the session is unknown).
     */
    fun onError(error: Throwable) {
        if (error is MongoNetworkException || error is CancellationException) current?.markDirty()
    }

    /** Returns an implicit server session to the pool (an explicit one stays with its ClientSession, whose hold ends). Idempotent. */
    fun release() {
        if (released) return
        released = true
        implicit?.let { pool.release(it, timeoutMinutes()) }
        implicit = null
        onRelease()
    }

    companion object {
        const val TRANSIENT_TRANSACTION_ERROR = "TransientTransactionError"
        private val READ_PRIMARY = ServerSelectionOperation.Read(ReadPreference.PRIMARY)

        /** True when [connection]'s handshake reported `logicalSessionTimeoutMinutes` or it is behind a load balancer. */
        fun supportsSessions(connection: Connection): Boolean {
            val d = connection.description ?: return false
            return d.serviceId != null || d.logicalSessionTimeoutMinutes != null
        }
    }
}
