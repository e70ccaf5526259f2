package dev.mooring.sdam

import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.session.ClusterClock
import dev.mooring.sdam.internal.session.ServerSession
import dev.mooring.sdam.internal.session.SessionClock
import dev.mooring.sdam.internal.session.Transaction
import dev.mooring.sdam.internal.session.TransactionEnds
import org.bson.BsonDocument
import org.bson.BsonTimestamp
import java.util.concurrent.atomic.AtomicBoolean

/**
 * An explicit client session (driver-sessions.md), from [MongoCluster.startSession]: the
 * operations given it ([MongoCluster.runCommand], [MongoCluster.runCursorCommand],
 * [MongoCluster.runRetryableRead], [MongoCluster.runRetryableWrite], [MongoCluster.withConnection])
 * send its [lsid], and so do the collections of `mooring-driver` given it.
 *
 * **Transactions** (transactions.md): [startTransaction], then operations given this session run
 * in the transaction until [commitTransaction] or [abortTransaction] (or [withTransaction], which
 * retries as transactions-convenient-api.md says). Their commands carry `txnNumber` and
 * `autocommit: false`, the first one `startTransaction: true` and the transaction's read concern;
 * the operations' own read and write concerns are not sent (the transaction's write concern goes
 * with the commit and the abort); their reads go to the transaction's read preference, which
 * must be primary; nothing in a transaction is retried but the commit and the abort (once) and
 * server overload. In a sharded cluster the transaction is pinned to the mongos of its first
 * command; in load-balanced mode to its first command's connection, which stays checked out
 * (a committed transaction's too) until the transaction is aborted, fails with a
 * `TransientTransactionError`, a new transaction starts, an operation outside a transaction
 * runs in the session or the session ends. A network or server selection error inside a transaction is labelled
 * `TransientTransactionError` (retry the whole transaction); a commit whose outcome is unknown
 * `UnknownTransactionCommitResult` (retry the commit). Misuse fails with
 * [MongoTransactionStateException].
 *
 * **Causal consistency** (causal-consistency.md, on unless [ClientSessionOptions.causalConsistency]
 * says otherwise or the session is a snapshot session): reads (find, aggregate, count, distinct)
 * are sent with `afterClusterTime` = the [operationTime] of the session's earlier operations.
 * **Snapshot sessions** ([ClientSessionOptions.snapshot]): reads are sent with
 * `readConcern: {level: "snapshot"}` and, after the first, the `atClusterTime` it reported
 * ([snapshotTime]); transactions are refused.
 *
 * The server session is taken from the cluster's pool when the session starts: a session left
 * unused for more than a minute after [MongoCluster.startSession] risks errors from a server
 * session that went stale on the server.
 *
 * **Concurrency.** The members are thread-safe, but a session is a sequence of operations: run one
 * operation (or iterate one cursor) at a time in it. A session belongs to the cluster that started
 * it; using it with another cluster fails with [IllegalArgumentException].
 *
 * **Closing.** [close] (endSession) returns the server session to the cluster's pool (or discards
 * it when [isDirty]); it is idempotent and never blocks. After it, operations given the session
 * fail with [IllegalStateException]. An operation still running in the session, such as a cursor
 * still open, keeps the server session (its getMores and killCursors send the same `lsid`) until
 * it ends: only then does the server session go back to the pool, so no other session can use
 * it meanwhile.
 */
public class ClientSession internal constructor(
    internal val clusterId: TopologyId,
    internal val serverSession: ServerSession,
    private val onEnd: (ServerSession) -> Unit,
    /** This session's options. */
    public val options: ClientSessionOptions = ClientSessionOptions(),
    /** The cluster's transaction defaults (its read concern level, write concern, read preference). */
    private val clusterDefaults: TransactionOptions = TransactionOptions(),
    private val ends: TransactionEnds? = null,
    /** The cluster's timeoutMS (what [ClientSessionOptions.defaultTimeoutMS] defaults to). */
    private val clusterTimeoutMS: Long? = null,
) : AutoCloseable {
    /**
     * The timeoutMS of commitTransaction, abortTransaction, withTransaction and endSession
     * (client-side-operations-timeout.md "Sessions"): the session's defaultTimeoutMS, else the cluster's; null: none.
     */
    internal val sessionTimeoutMS: Long? get() = options.defaultTimeoutMS ?: clusterTimeoutMS

    /**
     * The timeout of the `withTransaction` call running in this session, while it runs
     * (client-side-operations-timeout.md "Convenient Transactions API": stored on the session, so
     * the callback's operations in this session and the commit share it). Private to the
     * library; set and cleared by `withTransaction` only.
     */
    @Volatile
    internal var withTransactionTimeout: OperationTimeout? = null

    private val ended = AtomicBoolean(false)

    /** The operations (cursors included) running in this session, and whether the server session went back; guarded by `this`. */
    private var holders = 0
    private var returned = false

    /** The logical session id `{id: <UUID>}` this session sends as `lsid` (a copy). */
    public val lsid: BsonDocument get() = serverSession.lsid.clone()

    /** True once a network error happened in this session: its server session is discarded, never reused. */
    public val isDirty: Boolean get() = serverSession.isDirty

    /** This session's transaction state machine. */
    internal val transaction: Transaction = Transaction { pin -> ends?.release(pin) }

    /** This session's cluster time (gossiped with its operations only), operation time and snapshot time. */
    internal val clock: SessionClock = SessionClock(options.snapshot, transaction)

    /** The state of this session's transaction (transactions.md); [TransactionState.None] when none ran. Thread-safe read. */
    public val transactionState: TransactionState get() = transaction.state

    /** True between [startTransaction] and [commitTransaction] / [abortTransaction]. */
    public val isInTransaction: Boolean get() = transaction.isActive

    /** The mongos this session's transaction is pinned to (sharded clusters), or null. In load-balanced mode the transaction is pinned to a connection instead. */
    public val pinnedServer: ServerAddress? get() = transaction.pinned

    /**
     * The highest `operationTime` the replies to this session's operations carried, or one given
     * to [advanceOperationTime] (causal-consistency.md); null before either.
     */
    public val operationTime: BsonTimestamp? get() = clock.operationTime

    /** Advances [operationTime] to [operationTime] when it is higher (causal-consistency.md `advanceOperationTime`). Thread-safe. */
    public fun advanceOperationTime(operationTime: BsonTimestamp) {
        clock.advanceOperationTime(operationTime)
    }

    /** A snapshot session's read time (`atClusterTime` of its first read's reply); null before it, and in other sessions. */
    public val snapshotTime: BsonTimestamp? get() = clock.snapshotTime

    /**
     * Starts a transaction (transactions.md `startTransaction`): [options]' null fields come from
     * [ClientSessionOptions.defaultTransactionOptions], then from the cluster's settings. Sends
     * nothing; the transaction starts on the server with its first command. Fails with
     * [MongoTransactionStateException] in a snapshot session, while a transaction is in progress,
     * and for an unacknowledged write concern; with [IllegalStateException] after [close].
     */
    public fun startTransaction(options: TransactionOptions = TransactionOptions()) {
        check(!ended.get()) { "this session has ended" }
        if (this.options.snapshot) throw MongoTransactionStateException("Transactions are not supported in snapshot sessions")
        transaction.checkCanStart()
        val resolved = options.withDefaults(this.options.defaultTransactionOptions).withDefaults(clusterDefaults)
        if (resolved.writeConcern?.w == WriteAcknowledgement.Nodes(0)) {
            throw MongoTransactionStateException("Transactions do not support unacknowledged write concern")
        }
        transaction.start(resolved, serverSession.nextTxnNumber(), ends?.transactionSpan())
    }

    /**
     * Commits the transaction (transactions.md `commitTransaction`): sends `commitTransaction`
     * to the primary (or the pinned mongos, with the `recoveryToken`) with the transaction's write
     * concern and `maxTimeMS` = maxCommitTimeMS, retried once on a retryable error with
     * `w: "majority"` (and `wtimeout: 10000` unless set). A transaction in which no command ran
     * sends nothing. Calling it again after a commit sends it again (as a retry). Errors are
     * labelled `UnknownTransactionCommitResult` when the outcome is unknown (network, selection,
     * retryable, MaxTimeMSExpired and most write concern errors); a write concern error is
     * thrown as a `MongoCommandException`. Fails with [MongoTransactionStateException] without a
     * transaction or after [abortTransaction].
     */
    public suspend fun commitTransaction(timeoutMS: Long? = null) {
        val send = transaction.beginCommit()
        try {
            if (send) endsFor().end(this, commit = true, endTimeout(timeoutMS))
        } finally {
            transaction.endSpan() // open-telemetry.md "Transactions": the commit finishes the transaction's span
        }
    }

    /**
     * The timeout of a commit or abort given [timeoutMS]: that value; else inside `withTransaction`
     * the call's remaining time; else [sessionTimeoutMS] (client-side-operations-timeout.md "Sessions").
     */
    private fun endTimeout(timeoutMS: Long?): OperationTimeout {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
        if (timeoutMS == null) withTransactionTimeout?.let { return it }
        return OperationTimeout.start(timeoutMS ?: sessionTimeoutMS)
    }

    /**
     * Aborts the transaction (transactions.md `abortTransaction`): sends `abortTransaction` (once
     * more on a retryable error) when commands ran in it; its errors are ignored. The session is
     * unpinned. Fails with [MongoTransactionStateException] without a transaction, after a commit
     * or a second time.
     */
    public suspend fun abortTransaction(timeoutMS: Long? = null) {
        val send = transaction.beginAbort()
        try {
            if (send) endsFor().end(this, commit = false, endTimeout(timeoutMS))
        } finally {
            transaction.unpin()
            transaction.endSpan()
        }
    }

    private fun endsFor(): TransactionEnds {
        check(!ended.get()) { "this session has ended" }
        return checkNotNull(ends) { "this session cannot run transactions" }
    }

    /**
     * The most recent cluster time this session has seen (driver-sessions.md `clusterTime`): the
     * `$clusterTime` document `{clusterTime: Timestamp, signature: {...}}` of a reply to one of its
     * operations, or one given to [advanceClusterTime]; null before either (and always with a
     * deployment that reports no cluster times). A copy.
     */
    public val clusterTime: BsonDocument? get() = clock.current?.clone()

    /**
     * Advances [clusterTime] to [clusterTime] when it is higher (compared by its `clusterTime`
     * timestamp), and leaves it otherwise (driver-sessions.md `advanceClusterTime`). The cluster's
     * own cluster time is never advanced this way: a cluster time not received from a server can
     * only affect this session's operations. Fails with [IllegalArgumentException] when
     * [clusterTime] has no `clusterTime` timestamp. Thread-safe; allowed after [close].
     */
    public fun advanceClusterTime(clusterTime: BsonDocument) {
        require(ClusterClock.timestampOf(clusterTime) != null) { "not a cluster time (no clusterTime timestamp): ${clusterTime.toJson()}" }
        clock.advance(clusterTime.clone())
    }

    /**
     * Ends the session as [close] does, and first, when a transaction is in progress, aborts it
     * and waits for the abort (driver-sessions.md `endSession`; its errors are ignored, as
     * [abortTransaction]'s are). [close] aborts in the background instead, for callers that cannot
     * suspend. Idempotent.
     */
    public suspend fun endSession() {
        if (!ended.get() && transaction.state == TransactionState.InProgress && ends != null) abortTransaction()
        close()
    }

    /** True once [close] was called. */
    public val isEnded: Boolean get() = ended.get()

    /**
     * Ends the session (endSession): returns its server session to the pool, or once the
     * operations still running in it (an open cursor) have ended. A transaction in progress is
     * aborted first (driver-sessions.md `endSession`), in the cluster's scope, the server session
     * held until the abort ends. Idempotent, non-blocking.
     */
    override fun close() {
        if (!ended.compareAndSet(false, true)) return
        transaction.endSpan()
        if (transaction.state == TransactionState.InProgress && ends != null) {
            transaction.beginAbort()
            synchronized(this) { holders++ }
            ends.abortAfterClose(this) { releaseHold() }
        } else {
            if (transaction.state == TransactionState.Starting) transaction.beginAbort()
            transaction.unpin() // transactions.md "When to unpin": the session ended (a committed transaction's connection)
        }
        returnWhenUnused()
    }

    /** The server session for an operation of the cluster [id]; fails for another cluster or an ended session. */
    internal fun checkUsable(id: TopologyId): ServerSession {
        require(id == clusterId) { "this session belongs to cluster $clusterId, not to $id" }
        check(!ended.get()) { "this session has ended" }
        return serverSession
    }

    /**
     * [checkUsable], and holds the server session for one operation until [releaseHold]: [close]
     * does not return it to the pool meanwhile.
     */
    internal fun hold(id: TopologyId): ServerSession {
        val s = checkUsable(id)
        synchronized(this) { holders++ }
        if (ended.get()) { // ended concurrently (a misuse: sessions are sequential); refuse, as checkUsable would have
            releaseHold()
            checkUsable(id)
        }
        return s
    }

    /** Ends one operation's hold ([hold]); the last one after [close] returns the server session. */
    internal fun releaseHold() {
        synchronized(this) { holders-- }
        if (ended.get()) returnWhenUnused()
    }

    private fun returnWhenUnused() {
        val now = synchronized(this) { (holders == 0 && !returned).also { if (it) returned = true } }
        if (now) onEnd(serverSession)
    }
}
