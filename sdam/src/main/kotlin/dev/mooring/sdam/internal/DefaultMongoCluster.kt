package dev.mooring.sdam.internal

import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.internal.command.CommandMonitor
import dev.mooring.events.EventBus
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ServerEvent
import dev.mooring.sdam.ServerHeartbeatEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyEvent
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.internal.cursor.CursorFlow
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.sdam.ClientSessionOptions
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.internal.operation.EndTransactionOperation
import dev.mooring.sdam.internal.session.TransactionEnds
import dev.mooring.sdam.internal.cursor.PageCursor
import dev.mooring.sdam.internal.operation.CommandOperation
import dev.mooring.sdam.internal.operation.CursorCommandOperation
import dev.mooring.sdam.internal.operation.EndSessionsOperation
import dev.mooring.sdam.internal.operation.OperationContext
import dev.mooring.sdam.internal.operation.RetryableWriteOperation
import dev.mooring.sdam.internal.operation.WithConnectionOperation
import dev.mooring.sdam.internal.retry.RetryableRead
import dev.mooring.sdam.internal.session.ClusterClock
import dev.mooring.sdam.internal.session.ServerSessionPool
import dev.mooring.sdam.internal.settings.UnhonouredSettings
import dev.mooring.sdam.internal.srv.SrvPoller
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import dev.mooring.sdam.internal.topology.MonitorFactory
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.ServerMonitorFactory
import dev.mooring.sdam.internal.topology.ServerSelector
import dev.mooring.sdam.internal.topology.Topology
import dev.mooring.sdam.internal.tracing.OperationTracer
import dev.mooring.sdam.internal.tracing.Tracing
import dev.mooring.sdam.internal.tracing.trace
import dev.mooring.sdam.internal.tracing.traceCommand
import dev.mooring.sdam.internal.tracing.TransactionSpan
import kotlin.time.Duration
import kotlinx.coroutines.CoroutineDispatcher
import dev.mooring.sdam.internal.topology.ConnectionPin
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.SharedFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.filterIsInstance
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * The [MongoCluster] the factory functions create: its contract is the interface's. One cluster's
 * pieces (topology, selector, operation runner, sessions, the connection factory's event loops)
 * are built in `init`; every operation only delegates to `internal/operation`. [monitorFactory]
 * (null: the real server monitors) is the tests' hook ([ClusterInternals.create]); the internal
 * members are the hooks of `ClusterInternals`, `SrvPollingInternals`, `CursorPage` and
 * `CallerTracingContext`, reached through [implementation].
 */
internal class DefaultMongoCluster(
    requested: MongoClusterSettings,
    monitorFactory: MonitorFactory?,
    initialListeners: List<EventListener>,
) : MongoCluster {
    // mongodb+srv: the seed list lookup, the one I/O of the constructor (see SrvSeedlistDiscovery).
    private val seedlist = SrvSeedlistDiscovery.prepareBlocking(requested)

    override val settings: MongoClusterSettings = seedlist.settings

    internal val tracer: OperationTracer? = Tracing.create(settings.tracing) // null when tracing is off

    private val job = SupervisorJob()
    private val scope = CoroutineScope(job + Dispatchers.Default)
    private val bus = EventBus()
    private val connectionFactory: DefaultConnectionFactory
    private val live: Topology
    private val selector: ServerSelector
    private val runner: OperationRunner
    private val closeMutex = Mutex()
    private val sessions = ServerSessionPool()
    /** The operations' shared context: every operation below only delegates to `internal/operation`. */
    private val ops: OperationContext
    private val closerJob = Job()

    init {
        UnhonouredSettings.check(settings)?.let { throw InvalidSettingsException(it) }
        initialListeners.forEach { bus.addListener(it) }
        tracer?.let { bus.addListener(it.poolListener) }
        connectionFactory = DefaultConnectionFactory(settings.connection, settings.driverInfo)
        val id = TopologyId.next()
        live = Topology(settings, bus, connectionFactory, monitorFactory ?: ServerMonitorFactory(settings, connectionFactory, bus, id), scope, id)
        selector = ServerSelector(live)
        runner = OperationRunner(live, selector, connectionFactory.dispatcher)
        ops = OperationContext(settings, live, runner, CommandMonitor(bus, settings.logging), sessions, ClusterClock(), tracer)
        SrvPoller.start(seedlist, live, scope)
        // An uncontended open does not suspend: the opening events are published before the constructor returns.
        scope.launch(start = CoroutineStart.UNDISPATCHED) { live.open() }
    }

    override fun appendMetadata(driverInfo: DriverInfo) {
        connectionFactory.appendMetadata(driverInfo)
    }

    override val dispatcher: CoroutineDispatcher get() = connectionFactory.dispatcher

    override val topology: StateFlow<TopologyDescription> get() = live.description

    override val topologyId: TopologyId get() = live.id

    override val events: SharedFlow<MooringEvent> get() = bus.events

    override val poolEvents: Flow<ConnectionPoolEvent> get() = bus.events.filterIsInstance()

    override val commandEvents: Flow<CommandEvent> get() = bus.events.filterIsInstance()

    override val serverEvents: Flow<ServerEvent> get() = bus.events.filterIsInstance()

    override val topologyEvents: Flow<TopologyEvent> get() = bus.events.filterIsInstance()

    override val heartbeatEvents: Flow<ServerHeartbeatEvent> get() = bus.events.filterIsInstance()

    override fun addListener(listener: EventListener): AutoCloseable = bus.addListener(listener)

    override suspend fun runCommand(
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long?,
    ): BsonDocument = tracer.trace("runCommand", database, session?.transaction?.span) {
        CommandOperation.run(ops, database, command, readPreference, ops.runCommandRetry, session, timeoutMS, generic = true)
    }

    /** [runCommand] for a helper's command ([HelperCommand]): in a causally consistent session it gets `afterClusterTime` where the command takes one. */
    internal suspend fun runHelperCommand(
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long?,
        operationName: String?,
    ): BsonDocument = tracer.traceCommand(database, command, operationName, session?.transaction?.span) {
        CommandOperation.run(ops, database, command, readPreference, ops.runCommandRetry, session, timeoutMS)
    }

    /** The operation runner, for the test hooks of ClusterInternals. */
    internal val operationRunner: OperationRunner get() = runner

    override suspend fun runRetryableRead(
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long?,
    ): BsonDocument = tracer.traceCommand(database, command, null, session?.transaction?.span) {
        CommandOperation.run(ops, database, command, readPreference, RetryableRead(settings.retryReads), session, timeoutMS)
    }

    override fun runCursorCommand(
        database: String,
        command: Bson,
        options: RunCursorCommandOptions,
    ): Flow<BsonDocument> = CursorFlow.documents(CursorCommandOperation.pages(ops, database, command, options, retryableRead = false, limit = null, generic = true))

    /**
     * [runCursorCommand] as a flow of batches (see [CursorPage]); with [retryableRead] the
     * initial command is a retryable read (the CRUD helpers' find, aggregate, ...), else it
     * is retried as [runCommand] is (a pool-cleared error; server overload when retryReads and
     * retryWrites are both on). A positive [limit] caps the documents returned (see [CursorPage.pages]).
     */
    /** One cursor of [command] for its caller to iterate (see [PageCursor]). */
    internal fun pageCursor(database: String, command: Bson, options: RunCursorCommandOptions, retryableRead: Boolean, initialTimeoutMS: Long?): PageCursor =
        CursorCommandOperation.pageCursor(ops, database, command, options, retryableRead, initialTimeoutMS)

    internal fun runCursorPages(database: String, command: Bson, options: RunCursorCommandOptions, retryableRead: Boolean = false, limit: Int? = null): Flow<CursorPage> =
        CursorCommandOperation.pages(ops, database, command, options, retryableRead, limit)

    override fun startSession(): ClientSession = startSession(ClientSessionOptions())

    override fun startSession(options: ClientSessionOptions): ClientSession {
        if (live.isClosed || runner.isClosing) throw MongoClusterClosedException("the cluster is closed; cannot start a session")
        return ClientSession(live.id, sessions.acquire(ops.sessionTimeoutMinutes()), { sessions.release(it, ops.sessionTimeoutMinutes()) }, options, transactionDefaults, transactionEnds, settings.timeoutMS)
    }

    /** The transaction options a session inherits from the settings. */
    private val transactionDefaults = TransactionOptions(
        settings.readConcernLevel, settings.writeConcern.takeUnless { it.isServerDefault }, settings.readPreference, null,
    )

    /** The cluster's part of commitTransaction / abortTransaction ([EndTransactionOperation]). */
    private val transactionEnds = object : TransactionEnds {
        override suspend fun end(session: ClientSession, commit: Boolean, timeout: OperationTimeout) {
            tracer.trace(if (commit) "commitTransaction" else "abortTransaction", "admin", session.transaction.span) { EndTransactionOperation.run(ops, session, commit, held = true, timeout) }
        }

        override fun transactionSpan(): TransactionSpan? = tracer?.startTransaction()

        override fun abortAfterClose(session: ClientSession, done: () -> Unit) {
            scope.launch {
                try {
                    EndTransactionOperation.run(ops, session, commit = false, held = false, OperationTimeout.start(session.sessionTimeoutMS))
                } catch (e: Exception) {
                    // driver-sessions.md: the abort of endSession ignores errors (EndTransactionOperation ignores an abort's)
                } finally {
                    done()
                }
            }
        }

        override fun release(pin: ConnectionPin) {
            scope.launch(start = CoroutineStart.UNDISPATCHED) { withContext(NonCancellable) { pin.release() } }
        }
    }

    override suspend fun runRetryableWrite(database: String, command: Bson, session: ClientSession?, timeoutMS: Long?): BsonDocument =
        tracer.traceCommand(database, command, null, session?.transaction?.span) { RetryableWriteOperation.run(ops, database, command, session, timeoutMS) }

    override suspend fun <T> withConnection(
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long?,
        block: suspend (Connection) -> T,
    ): T = WithConnectionOperation.run(ops, readPreference, session, timeoutMS, block)

    override fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics> =
        live.pools().mapValues { it.value.statisticsSnapshot() }

    override suspend fun closeSuspending() {
        close(Duration.ZERO)
    }

    override suspend fun close(gracePeriod: Duration) {
        withContext(NonCancellable) {
            closeMutex.withLock {
                if (live.isClosed) return@withLock
                runner.beginClosing()
                runner.failWaitingCheckouts(live.pools().values)
                if (gracePeriod.isPositive()) withTimeoutOrNull(gracePeriod) { runner.awaitNoneHolding() }
                EndSessionsOperation.run(ops)
                if (runner.holdingCount > 0) {
                    for (pool in live.pools().values) if (!pool.loadBalanced) pool.clear(interruptInUseConnections = true, cause = MongoClusterClosedException("the cluster is closing"))
                }
                live.close()
                job.cancel()
                job.join()
                connectionFactory.awaitClosed()
            }
        }
    }

    override fun close() {
        CoroutineScope(closerJob + Dispatchers.IO).launch { closeSuspending() }.asCompletableFuture().get()
    }

    /** Internal API for tests: the cluster's root job (its children are the cluster's coroutines). */
    internal val rootJob: Job get() = job

    /** Internal API for tests: the live topology. */
    internal val liveTopology: Topology get() = live
}

/**
 * This cluster as the implementation the factory functions create, for Mooring's internal hooks.
 * Throws [IllegalArgumentException] for another [MongoCluster] (a caller's own implementation or wrapper).
 */
internal fun MongoCluster.implementation(): DefaultMongoCluster =
    this as? DefaultMongoCluster ?: throw IllegalArgumentException("not a cluster of the MongoCluster factory functions: $this")
