package dev.mooring.sdam

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.internal.command.CommandMonitor
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.events.EventBus
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.retry.RetryableRead
import dev.mooring.sdam.internal.retry.RetryableWrite
import dev.mooring.sdam.internal.retry.RetryableWriteConcernReply
import dev.mooring.sdam.internal.session.ServerSessionPool
import dev.mooring.sdam.internal.srv.SrvPoller
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import dev.mooring.sdam.internal.topology.MonitorFactory
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import dev.mooring.sdam.internal.topology.ServerMonitorFactory
import dev.mooring.sdam.internal.topology.ServerSelector
import dev.mooring.sdam.internal.topology.Topology
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.SharedFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.filterIsInstance
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument
import org.bson.conversions.Bson
import kotlin.time.Duration

/**
 * A MongoDB deployment as seen by one client: its live topology (server discovery and
 * monitoring), one connection pool per usable server, server selection and SDAM error
 * handling. Create one per application and share it.
 *
 * ```
 * MongoCluster("mongodb://host1,host2/?replicaSet=rs0").use { cluster ->
 *     cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
 * }
 * ```
 *
 * **No I/O in the constructor** but one: for `mongodb+srv` the constructor looks up the SRV and
 * TXT records (on `Dispatchers.IO`, bounded by [DnsResolverSettings.timeoutMS]; the SDAM spec's
 * one exception) and, for a sharded or not yet known topology, SRV polling then runs as a
 * coroutine of the cluster. Construction validates the settings, publishes the opening
 * events and starts the monitors as coroutines of the cluster's own scope
 * (`SupervisorJob() + Dispatchers.Default`, never the caller's); sockets are opened by them.
 *
 * **Concurrency.** Every member is thread-safe; any number of operations may run concurrently.
 * Cancelling an operation leaks nothing: its connection goes back to the pool (closed when its
 * wire state is unknown).
 *
 * **Closing.** [closeSuspending] (or [close], its blocking form for Java and `use`) refuses new
 * operations, fails operations still waiting, stops every monitor and pool and returns when
 * every coroutine of the cluster has stopped, after publishing ServerClosed, the final
 * TopologyDescriptionChanged (to Unknown) and TopologyClosed. [close] with a grace period lets
 * operations that hold a connection finish first. After close every operation fails with
 * [MongoClusterClosedException]; [topology] stays readable.
 */
public class MongoCluster internal constructor(
    requested: MongoClusterSettings,
    monitorFactory: MonitorFactory?,
    initialListeners: List<EventListener>,
) : AutoCloseable {
    /** A cluster for [settings]. Throws [InvalidSettingsException] subtypes for settings the specs forbid. */
    public constructor(settings: MongoClusterSettings) : this(settings, null, emptyList())

    /**
     * A cluster for [settings] whose [listeners] are registered before anything is published,
     * so they also see the opening events (TopologyOpening, ServerOpening, ...).
     */
    public constructor(settings: MongoClusterSettings, listeners: List<EventListener>) : this(settings, null, listeners)

    /** A cluster for the connection string [uri]. Throws [InvalidConnectionStringException] for a malformed URI. */
    public constructor(uri: String) : this(SrvSeedlistDiscovery.settingsFromUri(uri), null, emptyList())

    /**
     * A cluster for the connection string [uri] whose DNS queries (mongodb+srv) go to [dnsResolver].
     * Throws [InvalidConnectionStringException] for a malformed URI or SRV/TXT answers that break
     * the seedlist rules, [DnsLookupException] when a DNS query fails.
     */
    public constructor(uri: String, dnsResolver: DnsResolverSettings) : this(SrvSeedlistDiscovery.settingsFromUri(uri, dnsResolver), null, emptyList())

    // mongodb+srv: the seed list lookup, the one I/O of the constructor (see SrvSeedlistDiscovery).
    private val seedlist = SrvSeedlistDiscovery.prepareBlocking(requested)

    /** The settings this cluster runs with (for `mongodb+srv`: after the seed list lookup). */
    public val settings: MongoClusterSettings = seedlist.settings

    private val job = SupervisorJob()
    private val scope = CoroutineScope(job + Dispatchers.Default)
    private val bus = EventBus()
    private val connectionFactory: DefaultConnectionFactory
    private val live: Topology
    private val selector: ServerSelector
    private val runner: OperationRunner
    private val closeMutex = Mutex()
    private val commandMonitor = CommandMonitor(bus, settings.logging)
    private val sessions = ServerSessionPool()
    private val closerJob = Job()

    init {
        initialListeners.forEach { bus.addListener(it) }
        connectionFactory = DefaultConnectionFactory(settings.connection)
        val id = TopologyId.next()
        live = Topology(settings, bus, connectionFactory, monitorFactory ?: ServerMonitorFactory(settings, connectionFactory, bus, id), scope, id)
        selector = ServerSelector(live)
        runner = OperationRunner(live, selector)
        SrvPoller.start(seedlist, live, scope)
        // An uncontended open does not suspend: the opening events are published before the constructor returns.
        scope.launch(start = CoroutineStart.UNDISPATCHED) { live.open() }
    }

    /** The current topology description; a conflated [StateFlow] (collectors see the latest). */
    public val topology: StateFlow<TopologyDescription> get() = live.description

    /** This cluster's topology id, carried by its SDAM events and log messages. */
    public val topologyId: TopologyId get() = live.id

    /**
     * Every event (CMAP, SDAM, heartbeat, command) in publication order, with the [EventBus] overflow
     * policy (a slow collector misses events and then sees an `EventsDropped`). Use
     * [addListener] to see every event.
     */
    public val events: SharedFlow<MooringEvent> get() = bus.events

    /** The CMAP pool and connection events of [events]. */
    public val poolEvents: Flow<ConnectionPoolEvent> get() = bus.events.filterIsInstance()

    /** The command monitoring events of [events]: started, succeeded, failed (application commands only). */
    public val commandEvents: Flow<CommandEvent> get() = bus.events.filterIsInstance()

    /** The SDAM server events of [events]: opening, description changed, closed. */
    public val serverEvents: Flow<MooringEvent>
        get() = bus.events.filter { it is ServerOpeningEvent || it is ServerDescriptionChangedEvent || it is ServerClosedEvent }

    /** The SDAM topology events of [events]: opening, description changed, closed. */
    public val topologyEvents: Flow<MooringEvent>
        get() = bus.events.filter { it is TopologyOpeningEvent || it is TopologyDescriptionChangedEvent || it is TopologyClosedEvent }

    /** The server heartbeat events of [events]. */
    public val heartbeatEvents: Flow<MooringEvent>
        get() = bus.events.filter { it is ServerHeartbeatStartedEvent || it is ServerHeartbeatSucceededEvent || it is ServerHeartbeatFailedEvent }

    /** Registers a synchronous [listener] that sees every event from now on; close the handle to remove it. */
    public fun addListener(listener: EventListener): AutoCloseable = bus.addListener(listener)

    /**
     * Runs [command] on [database] on a server selected by [readPreference] and returns the
     * reply. `$db` is added, and `$readPreference` where server-selection.md requires it (any
     * non-primary mode; primaryPreferred on a direct connection to a non-mongos server).
     *
     * Errors: [MongoServerSelectionTimeoutException] (no suitable server in time),
     * [MongoOperationTimeoutException] (timeoutMS), [ServerSelectionException] subtypes,
     * `MongoCommandException` (ok: 0), network and pool errors, [MongoClusterClosedException].
     * Every server error goes through SDAM error handling first. A `PoolClearedException` is
     * retried once after a fresh selection that deprioritizes the failed server; nothing else
     * is retried (see [runRetryableRead] and [runRetryableWrite]). The command is published as
     * command monitoring events ([commandEvents]).
     *
     * [timeoutMS] is this call's client-side operation timeout (client-side-operations-timeout.md):
     * null takes the cluster's [MongoClusterSettings.timeoutMS], 0 means no limit, a negative
     * value is an [IllegalArgumentException]. A positive timeoutMS bounds server selection,
     * checkout (with connection establishment), the command and any retry together; the command
     * is sent with `maxTimeMS` set to the remaining time minus the selected server's minimum
     * round trip time (and is not sent at all, failing with [MongoOperationTimeoutException], when
     * no time would be left; a `maxTimeMS` already in [command] is overwritten). With timeoutMS
     * set (0 included), a server's MaxTimeMSExpired error (code 50: an `ok: 0` reply, a write
     * error or a write concern error) is thrown as a [MongoOperationTimeoutException] whose cause
     * is the server's error, and so is the expiry of the deadline (its cause: what was running).
     */
    public suspend fun runCommand(
        database: String,
        command: Bson,
        readPreference: ReadPreference = ReadPreference.PRIMARY,
        timeoutMS: Long? = null,
    ): BsonDocument = runRead(database, command, readPreference, OperationRetry.POOL_CLEARED, timeoutMS)

    /**
     * Runs the read [command] (find, aggregate without `$out`, count, distinct, listCollections,
     * ...) on [database] as a retryable read (retryable-reads.md) and returns the reply.
     *
     * When [MongoClusterSettings.retryReads] is true (the default), a first attempt that fails
     * with a network error, a `PoolClearedException` or a server error with a retryable code
     * (NotWritablePrimary, NotPrimaryOrSecondary, PrimarySteppedDown, ShutdownInProgress,
     * InterruptedAtShutdown, HostUnreachable, NetworkTimeout, ...) is retried exactly once,
     * after a fresh server selection that in a sharded cluster avoids the failed mongos. The
     * retry's error is thrown, or the first error when the retry cannot select a server (the
     * other is attached as suppressed). With retryReads false nothing is retried (unlike
     * [runCommand], not even a `PoolClearedException`).
     * Both attempts are bounded together by timeoutMS; with a positive timeoutMS (the cluster's
     * or this call's [timeoutMS], as for [runCommand]) a retryable error is retried as often as
     * the deadline allows, each attempt with its own `maxTimeMS`. Cancelling the caller cancels
     * whichever attempt is running and nothing is retried. Errors and read preference handling
     * are as for [runCommand]. Only send commands that are safe to run twice.
     */
    public suspend fun runRetryableRead(
        database: String,
        command: Bson,
        readPreference: ReadPreference = ReadPreference.PRIMARY,
        timeoutMS: Long? = null,
    ): BsonDocument = runRead(database, command, readPreference, RetryableRead(settings.retryReads), timeoutMS)

    /** [runCommand] and [runRetryableRead]: select by [readPreference], send with its `$readPreference`, retry by [retry]. */
    private suspend fun runRead(database: String, command: Bson, readPreference: ReadPreference, retry: OperationRetry, timeoutMS: Long?): BsonDocument {
        val doc = checkCommand(database, command)
        val op = monitoredOperation()
        val timeout = operationTimeout(timeoutMS)
        return runner.run(ServerSelectionOperation.Read(readPreference), doc.firstKey, timeout.timeoutMS, retry) { selected, connection ->
            val sent = ReadPreferenceCommand.withReadPreference(doc, readPreference, live.description.value.type, selected.description)
            try {
                timeout.checkReply(monitored(connection, op).command(database, timeout.withMaxTimeMS(sent, selected.description)))
            } catch (e: Throwable) {
                throw timeout.translate(e)
            }
        }
    }

    /** The timeout of an operation called with [timeoutMS] (null: the cluster's [MongoClusterSettings.timeoutMS]); validates it. */
    private fun operationTimeout(timeoutMS: Long?): OperationTimeout {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
        return OperationTimeout.start(timeoutMS ?: settings.timeoutMS)
    }

    /**
     * Runs the write [command] (insert, update, delete, findAndModify, ...) on [database] on
     * the primary (or a mongos) as a retryable write (retryable-writes.md) and returns the reply.
     *
     * When [MongoClusterSettings.retryWrites] is true (the default), the write is acknowledged
     * (no `writeConcern: {w: 0}`) and the selected server supports retryable writes (a replica
     * set primary or mongos reporting `logicalSessionTimeoutMinutes`, or a load balancer; never
     * a standalone), the command is sent with an implicit session's `lsid` and a new
     * `txnNumber`, and a first attempt that fails with an error labelled `RetryableWriteError`
     * (Mooring adds the label to network errors and pool-cleared errors, and for servers older
     * than 4.4 to the retryable codes) or returns `ok: 1` with a retryable writeConcernError is
     * retried exactly once, with the same `lsid` and `txnNumber`, after a fresh server selection
     * (in a sharded cluster avoiding the failed mongos). The error of the retry is thrown, except
     * that the first error is thrown when the retry fails with a `NoWritesPerformed` error,
     * cannot select a server, or reaches a server without retryable write support (the other
     * error is attached as suppressed). A reply with a writeConcernError is returned, not
     * thrown, as by [runCommand]. Sessions are pooled and reused (a session that saw a network
     * error is discarded). Otherwise the write runs exactly once, without `lsid`/`txnNumber`
     * (unlike [runCommand], not even a `PoolClearedException` is retried: an interrupted write
     * may have been applied).
     *
     * Both attempts are bounded together by timeoutMS ([MongoOperationTimeoutException]; the
     * cluster's or this call's [timeoutMS], as for [runCommand]); with a positive timeoutMS a
     * retryable error is retried as often as the deadline allows (same `lsid` and `txnNumber`,
     * each attempt with its own `maxTimeMS`). Cancelling the caller cancels whichever attempt is
     * running and nothing is retried. The command must not carry its own `lsid` or `txnNumber`.
     */
    public suspend fun runRetryableWrite(database: String, command: Bson, timeoutMS: Long? = null): BsonDocument {
        val doc = checkCommand(database, command)
        require(!doc.containsKey("lsid") && !doc.containsKey("txnNumber")) { "a retryable write's command must not carry lsid or txnNumber" }
        val op = monitoredOperation()
        val timeout = operationTimeout(timeoutMS)
        return RetryableWrite(doc, settings.retryWrites, sessions).use { write ->
            try {
                runner.run(ServerSelectionOperation.Write, doc.firstKey, timeout.timeoutMS, write) { selected, connection ->
                    val sent = timeout.withMaxTimeMS(write.commandFor(selected.description, live.description.value), selected.description)
                    val wire = connection.description?.maxWireVersion
                    val reply = try {
                        monitored(connection, op).command(database, sent)
                    } catch (e: Throwable) {
                        write.onError(e, wire)
                        throw timeout.translate(e)
                    }
                    timeout.checkReply(write.checkReply(reply, wire ?: selected.description.maxWireVersion))
                }
            } catch (e: RetryableWriteConcernReply) {
                e.reply
            }
        }
    }

    /**
     * Runs [block] with a connection to a server selected by [readPreference], under the
     * same error handling and timeoutMS as [runCommand] (without the retry: [block] may not be
     * idempotent). The connection goes back to the pool when [block] returns or throws; it must
     * not be used afterwards. Its commands are published as command monitoring events.
     * [timeoutMS] (null: the cluster's) bounds selection, checkout and [block] together; the
     * commands [block] sends get no `maxTimeMS` (they are the caller's).
     */
    public suspend fun <T> withConnection(
        readPreference: ReadPreference = ReadPreference.PRIMARY,
        timeoutMS: Long? = null,
        block: suspend (Connection) -> T,
    ): T {
        val op = monitoredOperation()
        return runner.run(ServerSelectionOperation.Read(readPreference), "withConnection", operationTimeout(timeoutMS).timeoutMS, OperationRetry.NONE) { _, c ->
            block(monitored(c, op))
        }
    }

    private fun checkCommand(database: String, command: Bson): BsonDocument {
        require(database.isNotEmpty()) { "database name must not be empty" }
        val doc = command.toBsonDocument()
        require(doc.isNotEmpty()) { "command document must not be empty" }
        return doc
    }

    /** The command monitoring scope of one operation, or null when nobody observes (no allocation). */
    private fun monitoredOperation(): MonitoredOperation? = if (commandMonitor.isActive) MonitoredOperation() else null

    private fun monitored(connection: Connection, op: MonitoredOperation?): Connection =
        if (op == null) connection else commandMonitor.monitored(connection, op)

    /** Gauges of every current pool, read from the pools' own state (non-blocking snapshots). */
    public fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics> =
        live.pools().mapValues { it.value.statisticsSnapshot() }

    /** The number of operations currently selected onto [address] (used for in-window selection). */
    public fun operationCount(address: ServerAddress): Int = selector.operationCount(address)

    /** Closes at once (grace period zero); see [close] with a grace period. Idempotent; completes when cancelled. */
    public suspend fun closeSuspending() {
        close(Duration.ZERO)
    }

    /**
     * Graceful close: refuses new operations at once, fails operations still selecting or
     * waiting in a pool's queue (`PoolClosedException`), lets operations that hold a connection
     * finish within [gracePeriod], interrupts the rest, then stops every monitor and pool and
     * returns when all of the cluster's coroutines have stopped. Idempotent; concurrent calls
     * wait for the first; completes even when the caller is cancelled.
     */
    public suspend fun close(gracePeriod: Duration) {
        withContext(NonCancellable) {
            closeMutex.withLock {
                if (live.isClosed) return@withLock
                runner.beginClosing()
                if (gracePeriod.isPositive()) withTimeoutOrNull(gracePeriod) { runner.awaitNoneHolding() }
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

    /**
     * Closes the cluster from blocking code (Java, `use`): runs [closeSuspending] in a
     * dedicated coroutine and blocks the calling thread until it has finished (no
     * `runBlocking`). From a coroutine call [closeSuspending] instead, so no thread is blocked.
     */
    override fun close() {
        CoroutineScope(closerJob + Dispatchers.IO).launch { closeSuspending() }.asCompletableFuture().get()
    }

    /** Internal API for tests: the cluster's root job (its children are the cluster's coroutines). */
    internal val rootJob: Job get() = job

    /** Internal API for tests: the live topology. */
    internal val liveTopology: Topology get() = live

    public companion object {
        /** A cluster built with the settings DSL: `MongoCluster { hosts("a:27017"); replicaSet = "rs0" }`. */
        @JvmSynthetic
        public operator fun invoke(block: MongoClusterSettingsBuilder.() -> Unit): MongoCluster = MongoCluster(mongoClusterSettings(block))
    }
}
