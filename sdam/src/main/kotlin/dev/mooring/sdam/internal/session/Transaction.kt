package dev.mooring.sdam.internal.session

import dev.mooring.sdam.internal.tracing.TransactionSpan
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoTransactionStateException
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.TransactionState
import dev.mooring.sdam.internal.topology.ConnectionPin
import org.bson.BsonDocument

/**
 * Internal API, not stable: one session's transaction state machine (transactions.md
 * "Transaction states"), the one home of its transitions and misuse errors, with what the
 * running transaction carries: its resolved [options], [txnNumber], the mongos it is [pinned]
 * to (sharded), the load balancer [connection] it is pinned to (load-balanced mode) and the last
 * `recoveryToken` a mongos sent. [unpin] is the one home of unpinning both (transactions.md "When
 * to unpin"); [checkIn] returns a released connection to its pool (the session's cluster does it
 * at once, without suspending the caller). A session runs one operation at a time, so the fields
 * are only made visible across threads (volatile), not locked.
 */
internal class Transaction(private val checkIn: (ConnectionPin) -> Unit = {}) {
    @Volatile var state: TransactionState = TransactionState.None
        private set

    /** The running (or last) transaction's options, resolved against the session's and cluster's defaults. */
    @Volatile var options: TransactionOptions = TransactionOptions()
        private set

    /** The running (or last) transaction's number. */
    @Volatile var txnNumber: Long = 0
        private set

    /** The mongos the transaction's commands go to (sharded clusters: its first command's), or null. */
    @Volatile var pinned: ServerAddress? = null

    /**
     * The connection the transaction's commands go over in load-balanced mode (its first
     * command's, kept checked out until [unpin]); the operations of the transaction run under it
     * ([dev.mooring.sdam.internal.topology.OperationRunner] reuses it). A fresh one per transaction.
     */
    @Volatile var connection: ConnectionPin = ConnectionPin(transaction = true)
        private set

    /** The `recoveryToken` of the last mongos reply in this transaction, sent with commit and abort. */
    @Volatile var recoveryToken: BsonDocument? = null

    /** True once `commitTransaction` was sent for the current transaction: a second commit is a retry (`w: "majority"`). */
    @Volatile var commitSent: Boolean = false

    /**
     * The running transaction's span when the cluster traces ([TransactionSpan]): the operations of
     * the session run under it until its commit or abort ends it ([endSpan]).
     */
    @Volatile var span: TransactionSpan? = null

    /** Finishes the transaction's span, if any (after its commit or abort, or the session's end). */
    fun endSpan() {
        span?.end()
        span = null
    }

    /** True while commands run in the transaction (started, not yet committed or aborted). */
    val isActive: Boolean get() = state == TransactionState.Starting || state == TransactionState.InProgress

    /** Starts a transaction numbered [number] with [resolved] options (misuse checked by the caller, see [checkCanStart]). */
    fun start(resolved: TransactionOptions, number: Long, span: TransactionSpan? = null) {
        unpin() // transactions.md: before the new transaction's first selection
        endSpan()
        this.span = span
        connection = ConnectionPin(transaction = true)
        options = resolved
        txnNumber = number
        recoveryToken = null
        commitSent = false
        state = TransactionState.Starting
    }

    /** Fails unless a new transaction may start now. */
    fun checkCanStart() {
        if (isActive) throw MongoTransactionStateException("Transaction already in progress: commit or abort it before starting another")
    }

    /** The first command of the transaction was sent. */
    fun sent() {
        if (state == TransactionState.Starting) state = TransactionState.InProgress
    }

    /**
     * Moves to committed for `commitTransaction`; true when the command must be sent (a
     * transaction whose commands ran, or a commit called again), false for an empty one.
     */
    fun beginCommit(): Boolean = when (state) {
        TransactionState.None -> throw MongoTransactionStateException("No transaction started: call startTransaction before commitTransaction")
        TransactionState.Aborted -> throw MongoTransactionStateException("Cannot call commitTransaction after calling abortTransaction")
        TransactionState.Starting, TransactionState.CommittedEmpty -> { state = TransactionState.CommittedEmpty; false }
        TransactionState.InProgress, TransactionState.Committed -> { state = TransactionState.Committed; true }
    }

    /** Moves to aborted for `abortTransaction`; true when the command must be sent (commands ran in the transaction). */
    fun beginAbort(): Boolean = when (state) {
        TransactionState.None -> throw MongoTransactionStateException("No transaction started: call startTransaction before abortTransaction")
        TransactionState.Committed, TransactionState.CommittedEmpty ->
            throw MongoTransactionStateException("Cannot call abortTransaction after calling commitTransaction")
        TransactionState.Aborted -> throw MongoTransactionStateException("Cannot call abortTransaction twice")
        TransactionState.Starting -> { state = TransactionState.Aborted; false }
        TransactionState.InProgress -> { state = TransactionState.Aborted; true }
    }

    /** An operation outside a transaction starts: an ended transaction is forgotten (state none, unpinned). */
    fun operationOutside() {
        val s = state
        if (s == TransactionState.Committed || s == TransactionState.CommittedEmpty || s == TransactionState.Aborted) {
            state = TransactionState.None
            unpin()
        }
    }

    /**
     * Unpins the session (transactions.md: after a transient error, an unknown commit result or
     * before a retry of the commit or the abort, an abort, a new transaction, an operation
     * outside a transaction, the session's end): forgets the mongos and releases the connection.
     */
    fun unpin() {
        pinned = null
        val pin = connection
        if (pin.endPinning()) checkIn(pin)
    }
}
