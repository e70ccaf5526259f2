package dev.mooring.sdam

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.internal.auth.Reauthentication
import dev.mooring.cmap.internal.command.CommandMonitor
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.events.EventBus
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.cursor.CommandCursor
import dev.mooring.sdam.internal.cursor.CursorContext
import dev.mooring.sdam.internal.cursor.CursorFlow
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.sdam.internal.cursor.CursorTimeout
import dev.mooring.sdam.internal.retry.DefaultWriteConcern
import dev.mooring.sdam.internal.retry.RetryableRead
import dev.mooring.sdam.internal.retry.RetryableWrite
import dev.mooring.sdam.internal.retry.RetryableWriteConcernReply
import dev.mooring.sdam.internal.session.ClusterClock
import dev.mooring.sdam.internal.session.ClusterTimeConnection
import dev.mooring.sdam.internal.session.EndSessions
import dev.mooring.sdam.internal.session.OperationSession
import dev.mooring.sdam.internal.session.ServerSessionPool
import dev.mooring.sdam.internal.session.SessionConnection
import dev.mooring.sdam.internal.settings.UnhonouredSettings
import dev.mooring.sdam.internal.srv.SrvPoller
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import dev.mooring.sdam.internal.topology.MonitorFactory
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import dev.mooring.sdam.internal.topology.SelectedServer
import dev.mooring.sdam.internal.topology.ServerMonitorFactory
import dev.mooring.sdam.internal.topology.ServerSelector
import dev.mooring.sdam.internal.topology.Topology
import dev.mooring.sdam.internal.tracing.OperationTracer
import dev.mooring.sdam.internal.tracing.Tracing
import dev.mooring.sdam.internal.tracing.trace
import dev.mooring.sdam.internal.tracing.traceCommand
import kotlin.time.Duration
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
import kotlinx.coroutines.yield
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.conversions.Bson

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
 * coroutine of the cluster. Construction validates the settings (and throws
 * [InvalidSettingsException] for a setting Mooring parses but cannot honour: `readConcernLevel`,
 * `tlsDisableOCSPEndpointCheck`, `tlsDisableCertificateRevocationCheck`), publishes the opening
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
    public constructor(uri: String, dnsResolver: DnsResolverSettings) : this(uri, dnsResolver, emptyList())

    /**
     * A cluster for the connection string [uri] (DNS queries of `mongodb+srv` to [dnsResolver])
     * whose [listeners] are registered before anything is published. For `mongodb+srv` the seed
     * list is looked up here (blocking the calling thread), and an option the URI states wins
     * over the TXT record's (initial-dns-seedlist-discovery.md); every URI constructor, and the
     * Java facade's `MongoClusters.create(uri)`, goes through this rule. Errors as for the
     * two-argument form.
     */
    public constructor(uri: String, dnsResolver: DnsResolverSettings, listeners: List<EventListener>) :
        this(SrvSeedlistDiscovery.settingsFromUri(uri, dnsResolver), null, listeners)

    // mongodb+srv: the seed list lookup, the one I/O of the constructor (see SrvSeedlistDiscovery).
    private val seedlist = SrvSeedlistDiscovery.prepareBlocking(requested)

    /** The settings this cluster runs with (for `mongodb+srv`: after the seed list lookup). */
    public val settings: MongoClusterSettings = seedlist.settings

    internal val tracer: OperationTracer? = Tracing.create(settings.tracing) // null when tracing is off

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
    /** The highest cluster time received from the deployment's servers (driver-sessions.md). */
    private val clusterClock = ClusterClock()
    private val cursors: CursorContext
    private val closerJob = Job()

    init {
        UnhonouredSettings.check(settings)?.let { throw InvalidSettingsException(it) }
        initialListeners.forEach { bus.addListener(it) }
        tracer?.let { bus.addListener(it.poolListener) }
        connectionFactory = DefaultConnectionFactory(settings.connection.copy(proxy = settings.proxy ?: settings.connection.proxy), settings.driverInfo)
        val id = TopologyId.next()
        live = Topology(settings, bus, connectionFactory, monitorFactory ?: ServerMonitorFactory(settings, connectionFactory, bus, id), scope, id)
        selector = ServerSelector(live)
        runner = OperationRunner(live, selector, connectionFactory.dispatcher)
        cursors = CursorContext(live, runner, ::monitoredOperation, ::monitored, tracer)
        SrvPoller.start(seedlist, live, scope)
        // An uncontended open does not suspend: the opening events are published before the constructor returns.
        scope.launch(start = CoroutineStart.UNDISPATCHED) { live.open() }
    }

    /**
     * Appends [driverInfo] to the handshake metadata (handshake.md "Metadata updates after
     * MongoClient initialization"): connections created from now on send it; established
     * connections keep theirs, none is opened or closed for it, and no command is sent. A
     * [DriverInfo] equal to one already given (at construction or appended) changes nothing.
     * Thread-safe; takes effect for connections whose handshake starts after it returns.
     */
    public fun appendMetadata(driverInfo: DriverInfo) {
        connectionFactory.appendMetadata(driverInfo)
    }

    /**
     * The cluster's event loops as a [kotlinx.coroutines.CoroutineDispatcher]: one thread per core
     * unless `connection.eventLoopThreads` says otherwise (`mooring-loop-N-i`), each selecting on
     * sockets of this cluster's connections. Operations called from a coroutine running here are
     * resumed with their reply directly by the loop that received it, on its own thread: no thread
     * hand-off per reply, and a connection checked in is handed to the next waiter on the same
     * thread. From any other dispatcher an operation works the same: alone, it runs on its
     * caller's thread and pays one dispatch per reply back to its dispatcher; while other
     * operations hold connections, [runCommand], the retryable reads and writes and cursor commands
     * run on these loops and come back with the result (one dispatch each way). A caller's own
     * code ([withConnection]'s block) never runs here.
     *
     * ```
     * withContext(cluster.dispatcher) { repeat(1_000) { cluster.runCommand("admin", ping) } }
     * ```
     *
     * Code running here must never block its thread (no blocking I/O, no `Thread.sleep`, no
     * `runBlocking`, no `join()` on a future): the thread serves the sockets of many connections,
     * as on any event loop. A coroutine waiting for a reply is resumed by its connection's loop;
     * a dispatch (a launch, a `yield`, a lock handed over) goes to the coroutine's own loop. After
     * [close], coroutines dispatched here are cancelled (and run on `Dispatchers.IO` to finish).
     */
    public val dispatcher: kotlinx.coroutines.CoroutineDispatcher get() = connectionFactory.dispatcher

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
    public val serverEvents: Flow<ServerEvent> get() = bus.events.filterIsInstance()

    /** The SDAM topology events of [events]: opening, description changed, closed. */
    public val topologyEvents: Flow<TopologyEvent> get() = bus.events.filterIsInstance()

    /** The server heartbeat events of [events]: started, then succeeded or failed. */
    public val heartbeatEvents: Flow<ServerHeartbeatEvent> get() = bus.events.filterIsInstance()

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
     * is retried (see [runRetryableRead] and [runRetryableWrite]) except server overload.
     *
     * **Server overload** (client-backpressure.md; applies to [runCommand] when retryReads and
     * retryWrites are both on, to [runRetryableRead] with retryReads, to [runRetryableWrite]
     * with retryWrites): an error labelled `SystemOverloadedError` and `RetryableError` is
     * retried after an exponential backoff with jitter (`jitter * min(10 s, base * 2^retry)`,
     * base 100 ms or the error's `baseBackoffMS`), at most [MongoClusterSettings.maxAdaptiveRetries]
     * times (2 by default); once an overload error was seen, that cap also bounds the other
     * retries. With [MongoClusterSettings.enableOverloadRetargeting] the retry avoids the
     * overloaded server when another is suitable. Adjust your own retry logic accordingly, so
     * an operation is not retried for too long. The command is published as
     * command monitoring events ([commandEvents]).
     *
     * Sessions: the command carries [session]'s `lsid` (an explicit session on a server without
     * session support fails with [MongoSessionNotSupportedException]); without one, an implicit
     * session's `lsid` when the connection supports sessions (run-command.md). The command
     * document itself is never modified.
     *
     * Cluster time (driver-sessions.md "Gossipping the cluster time"; all operations of this
     * cluster): once a server's reply carried `$clusterTime`, every command is sent with the
     * highest cluster time seen in replies (or [session]'s [ClientSession.clusterTime] when that is
     * higher), unless it carries its own `$clusterTime`. Monitors' hellos neither send nor update it.
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
        session: ClientSession? = null,
        timeoutMS: Long? = null,
    ): BsonDocument = tracer.trace("runCommand", database) { runByReadPreference(database, command, readPreference, runCommandRetry, session, timeoutMS) }

    /** runCommand's policy: a pool-cleared error once; overload retries when retryReads and retryWrites are both on. */
    private val runCommandRetry = OperationRetry.withOverloadRetries(OperationRetry.POOL_CLEARED, settings.retryReads && settings.retryWrites)

    /** The operation runner, for the test hooks of ClusterInternals. */
    internal val operationRunner: OperationRunner get() = runner

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
        session: ClientSession? = null,
        timeoutMS: Long? = null,
    ): BsonDocument = tracer.traceCommand(database, command) { runByReadPreference(database, command, readPreference, RetryableRead(settings.retryReads), session, timeoutMS) }

    /**
     * One command on a server selected by [readPreference], for [runCommand] (any command,
     * writes included: runCommand selects by read preference too) and [runRetryableRead]: sent
     * with its `$readPreference` (for the topology type of the description the selection used),
     * the session's `lsid` and the timeout's `maxTimeMS`, retried by [retry].
     */
    private suspend fun runByReadPreference(
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        retry: OperationRetry,
        session: ClientSession?,
        timeoutMS: Long?,
    ): BsonDocument {
        val doc = checkCommand(database, command)
        val op = monitoredOperation()
        val timeout = operationTimeout(timeoutMS)
        val s = operationSession(session)
        // An object rather than a lambda: a suspend lambda is allocated twice per operation (its
        // instance, then a copy of it as the coroutine that runs it).
        val attempt = object : suspend (SelectedServer, Connection) -> BsonDocument {
            override suspend fun invoke(selected: SelectedServer, connection: Connection): BsonDocument {
                val sent = ReadPreferenceCommand.withReadPreference(s.attach(doc, connection), readPreference, selected.topology.type, selected.description)
                // the cluster time is gossiped here rather than by a ClusterTimeConnection: the same, without the wrapper and its frame
                val gossiped = ClusterTimeConnection.withClusterTime(timeout.withMaxTimeMS(sent, selected.description), clusterClock, s.clusterClock)
                val reply = try {
                    monitored(connection, op, s, timeout, gossip = false).command(database, gossiped)
                } catch (e: Throwable) {
                    if (e is MongoCommandException) ClusterTimeConnection.observe(e.response, clusterClock, s.clusterClock)
                    s.onError(e)
                    throw timeout.translate(e)
                }
                ClusterTimeConnection.observe(reply, clusterClock, s.clusterClock)
                return timeout.checkReply(reply)
            }
        }
        try {
            return runner.run(readSelection(readPreference), doc.firstKey, timeout.timeoutMS, retry, mayRunOnLoops = true, attempt)
        } finally {
            s.release()
        }
    }

    /** The selection of a read by [readPreference]: one shared value for the default, primary. */
    private fun readSelection(readPreference: ReadPreference): ServerSelectionOperation.Read =
        if (readPreference === ReadPreference.PRIMARY) READ_PRIMARY else ServerSelectionOperation.Read(readPreference)

    /** The timeout of an operation called with [timeoutMS] (null: the cluster's [MongoClusterSettings.timeoutMS]); validates it. */
    private fun operationTimeout(timeoutMS: Long?): OperationTimeout {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
        return OperationTimeout.start(timeoutMS ?: settings.timeoutMS)
    }

    /**
     * Runs the cursor-returning [command] (`find`, `aggregate`, `listCollections`, `listIndexes`,
     * ...) on [database] and returns its results as a cold [Flow] (run-command.md
     * `runCursorCommand`). Nothing is sent until the flow is collected; each collection runs the
     * command anew on a server selected by [RunCursorCommandOptions.readPreference] and emits the
     * documents of the first batch, then of each `getMore` (with the options' `batchSize`,
     * `maxTimeMS`, `comment`), until the server reports the cursor exhausted. Every `getMore` goes
     * to the server that opened the cursor — in load-balanced mode over the very connection, which
     * stays checked out (pinned) until the cursor is exhausted or closed — with the same `lsid`
     * (the explicit [RunCursorCommandOptions.session], else an implicit session held for the
     * cursor's life and returned as soon as the cursor is exhausted).
     *
     * A tailable cursor ([CursorType]) is not ended by an empty batch: its getMores go on until the
     * collector stops. When the collector is cancelled, throws or stops early (`take`, `first`), a
     * cursor still open on the server is killed with `killCursors` on its server (and pinned
     * connection), bounded by timeoutMS or else serverSelectionTimeoutMS, its outcome ignored; a
     * collector cancelled with [CursorCloseCancellation] closes it under that close's own timeoutMS.
     * timeoutMS (the options', else the cluster's) follows client-side-operations-timeout.md
     * ([TimeoutMode]): the initial command is bounded, retried and its errors translated as
     * [runCommand]'s (or [runRetryableRead]'s); it carries `maxTimeMS` (remaining time minus the
     * server's minimum round trip time, overwriting one in [command]) in CURSOR_LIFETIME mode and
     * for a tailable-await cursor, none in ITERATION mode otherwise. Each getMore is bounded by
     * the remaining lifetime (CURSOR_LIFETIME) or a fresh timeoutMS (ITERATION: one per document
     * awaited, so the getMores a tailable cursor sends over empty batches while the collector
     * waits for its next document share one timeoutMS, and the wait ends with
     * [MongoOperationTimeoutException] when it expires), without
     * `maxTimeMS` but for a tailable-await cursor's `min(maxTimeMS, remaining - minRoundTripTime)`;
     * killCursors gets a fresh timeoutMS (with its `maxTimeMS`). The command, each
     * getMore and the killCursors are published as command monitoring events and log messages.
     *
     * Errors: those of [runCommand] for the initial command; [MongoMissingCursorException] when
     * the reply has no `cursor` document; [MongoCursorProtocolException] for a getMore reply with
     * another cursor id or namespace; [MongoCursorServerUnavailableException] when the cursor's
     * server left the topology; [MongoOperationTimeoutException]; server errors of a getMore
     * (e.g. CursorNotFound) as `MongoCommandException`. After the cursor opened only server
     * overload is retried: a getMore failing with a retryable overload error is retried on the
     * cursor's server (connection) when retryReads is on, as client-backpressure.md says.
     * [IllegalArgumentException] at once when the options conflict with the effective timeoutMS
     * (a getMore maxTimeMS with timeoutMS, except a tailable-await maxTimeMS below it), when
     * timeoutMode is set without timeoutMS, or timeoutMode ITERATION for an aggregate with `$out`
     * or `$merge`.
     *
     * Concurrency: the flow may be collected any number of times, concurrently; each collection
     * is its own cursor, iterated by its collector only. Without timeoutMS, or in ITERATION
     * mode, a `maxTimeMS` in [command] is sent as given.
     */
    public fun runCursorCommand(
        database: String,
        command: Bson,
        options: RunCursorCommandOptions = RunCursorCommandOptions(),
    ): Flow<BsonDocument> = CursorFlow.documents(runCursorPages(database, command, options))

    /**
     * [runCursorCommand] as a flow of batches (see [CursorPage]); with [retryableRead] the
     * initial command is a retryable read (the CRUD helpers' find, aggregate, ...), else it
     * is retried as [runCommand] is (a pool-cleared error; server overload when retryReads and
     * retryWrites are both on). A positive [limit] caps the documents returned (see [CursorPage.pages]).
     */
    internal fun runCursorPages(database: String, command: Bson, options: RunCursorCommandOptions, retryableRead: Boolean = false, limit: Int? = null): Flow<CursorPage> {
        val doc = checkCommand(database, command)
        options.session?.checkUsable(live.id)
        val timeoutMS = options.timeoutMS ?: settings.timeoutMS
        val mode = cursorTimeoutMode(doc, options, timeoutMS)
        return CursorFlow.pages {
            val retry = if (retryableRead) RetryableRead(settings.retryReads) else runCommandRetry
            val timeout = CursorTimeout(timeoutMS, mode, options.cursorType, settings.serverSelectionTimeoutMS)
            CommandCursor(cursors, database, doc, options, retry, operationSession(options.session), timeout, limit)
        }
    }

    /**
     * The timeoutMode of a cursor with the effective [timeoutMS], after the checks of
     * client-side-operations-timeout.md "Cursors" ([IllegalArgumentException]): timeoutMode
     * set without timeoutMS; ITERATION for an aggregate with `$out` or `$merge`; a getMore
     * maxTimeMS with a positive timeoutMS, except a tailable-await cursor's below it.
     */
    private fun cursorTimeoutMode(command: BsonDocument, options: RunCursorCommandOptions, timeoutMS: Long?): TimeoutMode {
        require(options.timeoutMode == null || timeoutMS != null) {
            "timeoutMode ${options.timeoutMode} needs timeoutMS (set it on the call or the cluster)"
        }
        val limit = timeoutMS?.takeIf { it > 0 }
        val await = options.cursorType == CursorType.TAILABLE_AWAIT
        val maxTimeMS = options.maxTimeMS
        require(limit == null || maxTimeMS == null || (await && maxTimeMS < limit)) {
            "getMore maxTimeMS=$maxTimeMS with timeoutMS=$limit is not supported" +
                if (await) " (a tailable-await cursor's maxTimeMS must be below timeoutMS)" else ""
        }
        val mode = options.timeoutMode ?: if (options.cursorType == CursorType.NON_TAILABLE) TimeoutMode.CURSOR_LIFETIME else TimeoutMode.ITERATION
        require(options.timeoutMode != TimeoutMode.ITERATION || !writesOutput(command)) {
            "timeoutMode ITERATION is not allowed for an aggregate with \$out or \$merge (client-side-operations-timeout.md)"
        }
        return mode
    }

    /** True for an `aggregate` whose pipeline has a `$out` or `$merge` stage. */
    private fun writesOutput(command: BsonDocument): Boolean =
        command.firstKey == "aggregate" && (command["pipeline"] as? BsonArray).orEmpty().any { stage ->
            (stage as? BsonDocument)?.keys?.any { it == "\$out" || it == "\$merge" } == true
        }

    /**
     * Starts an explicit session (driver-sessions.md `startSession`) for this cluster's
     * operations; see [ClientSession]. Takes a server session from the cluster's pool (no I/O).
     * Fails with [MongoClusterClosedException] after close.
     */
    public fun startSession(): ClientSession {
        if (live.isClosed || runner.isClosing) throw MongoClusterClosedException("the cluster is closed; cannot start a session")
        return ClientSession(live.id, sessions.acquire(sessionTimeoutMinutes())) { sessions.release(it, sessionTimeoutMinutes()) }
    }

    /** [sessionTimeoutMinutes] as the function sessions take (one object for the cluster, not one per operation). */
    private val sessionTimeout: () -> Int? = ::sessionTimeoutMinutes

    /** The session pool's expiry: `logicalSessionTimeoutMinutes`, none in load-balanced mode (driver-sessions.md). */
    private fun sessionTimeoutMinutes(): Int? =
        live.description.value.let { if (it.type == TopologyType.LOAD_BALANCED) null else it.logicalSessionTimeoutMinutes }

    /**
     * The session of one operation: [explicit]'s (held until the operation releases it, so ending
     * the session meanwhile keeps its server session out of the pool), or an implicit one from the pool.
     */
    private fun operationSession(explicit: ClientSession?): OperationSession =
        if (explicit == null) {
            OperationSession(sessions, null, sessionTimeout)
        } else {
            OperationSession(sessions, explicit.hold(live.id), sessionTimeout, explicit.clock, explicit::releaseHold)
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
     * With [session] the write runs in that explicit session (its `lsid`, its next `txnNumber`);
     * an explicit session cannot be used for an unacknowledged write ([IllegalArgumentException]).
     * A command without a `writeConcern` of its own is sent with the cluster's
     * [MongoClusterSettings.writeConcern] (URI `w`, `wTimeoutMS`, `journal`; `wtimeout` left out
     * under a timeoutMS); [runCommand] sends commands as given (run-command.md).
     */
    public suspend fun runRetryableWrite(database: String, command: Bson, session: ClientSession? = null, timeoutMS: Long? = null): BsonDocument =
        tracer.traceCommand(database, command) { retryableWrite(database, command, session, timeoutMS) }

    private suspend fun retryableWrite(database: String, command: Bson, session: ClientSession?, timeoutMS: Long?): BsonDocument {
        val checked = checkCommand(database, command)
        require(!checked.containsKey("lsid") && !checked.containsKey("txnNumber")) { "a retryable write's command must not carry lsid or txnNumber" }
        val doc = DefaultWriteConcern.applyTo(checked, settings.writeConcern, (timeoutMS ?: settings.timeoutMS) != null)
        val unacknowledged = RetryableWrite.isUnacknowledged(doc)
        require(session == null || !unacknowledged) { "an explicit session cannot be used with an unacknowledged write (w: 0)" }
        val op = monitoredOperation()
        val timeout = operationTimeout(timeoutMS)
        val s = operationSession(session)
        return try {
            RetryableWrite(doc, settings.retryWrites, sessions, s.current).use { write ->
                try {
                    runner.run(ServerSelectionOperation.Write, doc.firstKey, timeout.timeoutMS, write, mayRunOnLoops = true) { selected, connection ->
                        // a write that is not retryable still runs in the (implicit or explicit) session, unless unacknowledged
                        val sent = write.commandFor(selected.description, live.description.value)
                            .let { if (it.containsKey("lsid") || unacknowledged) it else s.attach(it, connection) }
                            .let { timeout.withMaxTimeMS(it, selected.description) }
                        val wire = connection.description?.maxWireVersion
                        val reply = try {
                            monitored(connection, op, s, timeout).command(database, sent)
                        } catch (e: Throwable) {
                            s.onError(e)
                            write.onError(e, wire)
                            throw timeout.translate(e)
                        }
                        timeout.checkReply(write.checkReply(reply, wire ?: selected.description.maxWireVersion, selected.description.type == ServerType.MONGOS))
                    }
                } catch (e: RetryableWriteConcernReply) {
                    e.reply
                }
            }
        } finally {
            s.release()
        }
    }

    /**
     * Runs [block] with a connection to a server selected by [readPreference], under the
     * same error handling and timeoutMS as [runCommand] (without the retry: [block] may not be
     * idempotent). The connection goes back to the pool when [block] returns or throws; it must
     * not be used afterwards. Its commands are published as command monitoring events. With
     * [session], every command sent through the connection carries the session's `lsid`
     * ([MongoSessionNotSupportedException] on a server without sessions); without one, the
     * commands are sent as given (no implicit session: the block owns its command documents),
     * except for the cluster time, gossiped as by [runCommand].
     * [timeoutMS] (null: the cluster's) bounds selection, checkout and [block] together; the
     * commands [block] sends get no `maxTimeMS` (they are the caller's).
     */
    public suspend fun <T> withConnection(
        readPreference: ReadPreference = ReadPreference.PRIMARY,
        session: ClientSession? = null,
        timeoutMS: Long? = null,
        block: suspend (Connection) -> T,
    ): T {
        val op = monitoredOperation()
        val timeout = operationTimeout(timeoutMS)
        val s = session?.let { operationSession(it) }
        try {
            return tracer.trace("withConnection", null) {
                runner.run(ServerSelectionOperation.Read(readPreference), "withConnection", timeout.timeoutMS, OperationRetry.NONE) { _, c ->
                    val monitoredConnection = monitored(c, op, s, timeout)
                    // the caller's code runs in a dispatch of its own, never on the thread that served the
                    // checkout (which resumes the pool's other waiters next; see ConnectionPool's KDoc)
                    yield()
                    block(if (s == null) monitoredConnection else SessionConnection(monitoredConnection, s))
                }
            }
        } finally {
            s?.release()
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

    /**
     * [connection] as an operation's: reauthenticating, observed by command monitoring and tracing,
     * and gossiping the cluster time (the cluster's and [session]'s) outermost, so the events show
     * the `$clusterTime` sent. [timeout] is the operation's timeoutMS (the remaining time a
     * reauthentication's callback is given). Without [gossip] the caller gossips the cluster time
     * itself, around the call ([ClusterTimeConnection.withClusterTime], [ClusterTimeConnection.observe]).
     */
    private fun monitored(
        connection: Connection, op: MonitoredOperation?, session: OperationSession? = null, timeout: OperationTimeout? = null, gossip: Boolean = true,
    ): Connection =
        Reauthentication.wrap(connection, if (op == null) connection else commandMonitor.monitored(connection, op), timeout?.deadlineNanos)
            .let { tracer?.traced(it) ?: it }
            .let { if (gossip) ClusterTimeConnection(it, clusterClock, session?.clusterClock) else it }

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
                runner.failWaitingCheckouts(live.pools().values)
                if (gracePeriod.isPositive()) withTimeoutOrNull(gracePeriod) { runner.awaitNoneHolding() }
                endServerSessions()
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

    /** driver-sessions.md: `endSessions` for the pooled server sessions when closing, bounded by serverSelectionTimeoutMS. */
    private suspend fun endServerSessions() {
        val commands = EndSessions.commands(sessions.drain())
        if (commands.isEmpty()) return
        val pool = EndSessions.target(live.description.value)?.let { live.pool(it) } ?: return
        val op = monitoredOperation()
        withTimeoutOrNull(settings.serverSelectionTimeoutMS) {
            try {
                // OpenTelemetry: an operation span of its own around the endSessions command spans
                tracer.trace("endSessions", "admin") { pool.withConnection { c -> EndSessions.send(monitored(c, op), commands) } }
            } catch (e: MongoServerException) {
                // driver-sessions.md: errors of endSessions are ignored
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
        private val READ_PRIMARY = ServerSelectionOperation.Read(ReadPreference.PRIMARY)

        /** A cluster built with the settings DSL: `MongoCluster { hosts("a:27017"); replicaSet = "rs0" }`. */
        @JvmSynthetic
        public operator fun invoke(block: MongoClusterSettingsBuilder.() -> Unit): MongoCluster = MongoCluster(mongoClusterSettings(block))
    }
}
