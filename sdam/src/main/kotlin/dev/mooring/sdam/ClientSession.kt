package dev.mooring.sdam

import dev.mooring.sdam.internal.session.ClusterClock
import dev.mooring.sdam.internal.session.ServerSession
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicBoolean

/**
 * An explicit client session (driver-sessions.md), from [MongoCluster.startSession]: the
 * operations given it ([MongoCluster.runCommand], [MongoCluster.runCursorCommand],
 * [MongoCluster.runRetryableRead], [MongoCluster.runRetryableWrite], [MongoCluster.withConnection])
 * send its [lsid]. Transactions are not supported.
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
) : AutoCloseable {
    private val ended = AtomicBoolean(false)

    /** The operations (cursors included) running in this session, and whether the server session went back; guarded by `this`. */
    private var holders = 0
    private var returned = false

    /** The logical session id `{id: <UUID>}` this session sends as `lsid` (a copy). */
    public val lsid: BsonDocument get() = serverSession.lsid.clone()

    /** True once a network error happened in this session: its server session is discarded, never reused. */
    public val isDirty: Boolean get() = serverSession.isDirty

    /** This session's cluster time, gossiped with its operations only. */
    internal val clock: ClusterClock = ClusterClock()

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

    /** True once [close] was called. */
    public val isEnded: Boolean get() = ended.get()

    /**
     * Ends the session (endSession): returns its server session to the pool, or once the
     * operations still running in it (an open cursor) have ended. Idempotent, non-blocking.
     */
    override fun close() {
        if (ended.compareAndSet(false, true)) returnWhenUnused()
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
