package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.Connection
import dev.mooring.cmap.internal.auth.Reauthentication
import dev.mooring.cmap.internal.command.CommandMonitor
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.cursor.CursorContext
import dev.mooring.sdam.internal.session.ClusterClock
import dev.mooring.sdam.internal.session.ClusterTimeConnection
import dev.mooring.sdam.internal.session.OperationSession
import dev.mooring.sdam.internal.session.ServerSessionPool
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.Topology
import dev.mooring.sdam.internal.tracing.OperationTracer
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * What every operation of one cluster shares (the operations of this package take it as their
 * first argument): the [settings], the live [topology], the [runner] (select → check out → the
 * attempt → classify once → tell SDAM once → check in), command monitoring, the server session
 * pool, the cluster's [clusterClock] and the [tracer]. The facade (`MongoCluster`) builds one and
 * only delegates to the operations; the collection layer calls the same operations.
 *
 * Immutable and thread-safe; any number of operations use it concurrently.
 */
internal class OperationContext(
    val settings: MongoClusterSettings,
    val topology: Topology,
    val runner: OperationRunner,
    private val commandMonitor: CommandMonitor,
    val sessions: ServerSessionPool,
    /** The highest cluster time received from the deployment's servers (driver-sessions.md). */
    val clusterClock: ClusterClock,
    /** The cluster's OpenTelemetry tracer, or null when tracing is off. */
    val tracer: OperationTracer?,
) {
    /** runCommand's policy: a pool-cleared error once; overload retries when retryReads and retryWrites are both on. */
    val runCommandRetry: OperationRetry =
        OperationRetry.withOverloadRetries(OperationRetry.POOL_CLEARED, settings.retryReads && settings.retryWrites)

    /** What the cursors of this cluster share (they open and continue through the same runner and wrapping). */
    val cursors: CursorContext = CursorContext(topology, runner, ::monitoredOperation, ::monitored, tracer)

    /** The command monitoring scope of one operation, or null when nobody observes (no allocation). */
    fun monitoredOperation(): MonitoredOperation? = if (commandMonitor.isActive) MonitoredOperation() else null

    /**
     * [connection] as an operation's: reauthenticating, observed by command monitoring and tracing,
     * and gossiping the cluster time (the cluster's and [session]'s) outermost, so the events show
     * the `$clusterTime` sent ([ClusterTimeConnection]). [timeout] is the operation's timeoutMS (the
     * remaining time a reauthentication's callback is given).
     */
    fun monitored(connection: Connection, op: MonitoredOperation?, session: OperationSession? = null, timeout: OperationTimeout? = null): Connection =
        ClusterTimeConnection(ungossiped(connection, op, timeout), clusterClock, session?.clusterClock)

    /**
     * [monitored] without the gossip, for runCommand's path, which gossips through the same
     * function ([ClusterTimeConnection.gossiped]) inline, around its one command.
     */
    fun ungossiped(connection: Connection, op: MonitoredOperation?, timeout: OperationTimeout?): Connection =
        Reauthentication.wrap(connection, if (op == null) connection else commandMonitor.monitored(connection, op), timeout?.deadlineNanos)
            .let { tracer?.traced(it) ?: it }
            .let { if (timeout != null && timeout.isSet) TimeoutBoundConnection(it) else it }

    /**
     * The timeout of an operation called with [timeoutMS] (null: the cluster's [MongoClusterSettings.timeoutMS]);
     * validates it. In [session]'s `withTransaction` call, that call's remaining time instead
     * (client-side-operations-timeout.md "Convenient Transactions API": the session's timeout is the
     * operation's, not refreshed per operation).
     */
    fun operationTimeout(timeoutMS: Long?, session: ClientSession? = null): OperationTimeout {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
        session?.withTransactionTimeout?.let { return it }
        return OperationTimeout.start(timeoutMS ?: settings.timeoutMS)
    }

    /** The effective timeoutMS of a cursor operation of [session] given [timeoutMS]: as [operationTimeout], as milliseconds (what is left in a `withTransaction` call). */
    fun cursorTimeoutMS(timeoutMS: Long?, session: ClientSession?): Long? =
        session?.withTransactionTimeout?.let { t -> t.remainingMS()?.coerceAtLeast(1) ?: 0 } ?: timeoutMS ?: settings.timeoutMS

    /** [sessionTimeoutMinutes] as the function sessions take (one object for the cluster, not one per operation). */
    private val sessionTimeout: () -> Int? = ::sessionTimeoutMinutes

    /** The session pool's expiry: `logicalSessionTimeoutMinutes`, none in load-balanced mode (driver-sessions.md). */
    fun sessionTimeoutMinutes(): Int? =
        topology.description.value.let { if (it.type == TopologyType.LOAD_BALANCED) null else it.logicalSessionTimeoutMinutes }

    /**
     * The session of one operation: [explicit]'s (held until the operation releases it, so ending
     * the session meanwhile keeps its server session out of the pool), or an implicit one from the pool.
     */
    fun operationSession(explicit: ClientSession?, generic: Boolean = false): OperationSession =
        if (explicit == null) {
            OperationSession(sessions, null, sessionTimeout)
        } else {
            OperationSession(sessions, explicit.hold(topology.id), sessionTimeout, explicit.clock, explicit::releaseHold, explicit, generic = generic)
        }

    /** The selection of an operation of [s] by [readPreference] (null: a write), or its transaction's ([OperationSession.transactionSelection]). */
    fun selection(s: OperationSession, readPreference: ReadPreference?): ServerSelectionOperation =
        s.transactionSelection(write = readPreference == null)
            ?: if (readPreference == null) ServerSelectionOperation.Write else readSelection(readPreference)

    /** [command] as a document, after the checks every command-sending operation makes. */
    fun checkCommand(database: String, command: Bson): BsonDocument {
        require(database.isNotEmpty()) { "database name must not be empty" }
        val doc = command.toBsonDocument()
        require(doc.isNotEmpty()) { "command document must not be empty" }
        return doc
    }

    /** The selection of a read by [readPreference]: one shared value for the default, primary. */
    fun readSelection(readPreference: ReadPreference): ServerSelectionOperation.Read =
        if (readPreference === ReadPreference.PRIMARY) READ_PRIMARY else ServerSelectionOperation.Read(readPreference)

    private companion object {
        val READ_PRIMARY = ServerSelectionOperation.Read(ReadPreference.PRIMARY)
    }
}
