package dev.mooring.sdam

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.cmap.DriverInfo
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.DefaultMongoCluster
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import kotlin.time.Duration
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.SharedFlow
import kotlinx.coroutines.flow.StateFlow
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * A MongoDB deployment as seen by one client: its live topology (server discovery and
 * monitoring), one connection pool per usable server, server selection and SDAM error
 * handling. Create one per application with the [MongoCluster] factory functions (or the
 * settings DSL, `MongoCluster { hosts("a:27017") }`) and share it.
 *
 * ```
 * MongoCluster("mongodb://host1,host2/?replicaSet=rs0").use { cluster ->
 *     cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
 * }
 * ```
 *
 * An interface so that callers can wrap or substitute it (a decorator that adds metrics or
 * logging, a fake in a test); the contract below is what the factory functions' cluster
 * guarantees and what a substitute must keep. Mooring's own helpers that take a cluster
 * (`MooringMetrics`, `MooringOpenTelemetryMetrics`) use only these members.
 *
 * **Concurrency.** Every member is thread-safe; any number of operations may run concurrently.
 * Operations wait for a connection in each pool's FIFO order (see `ConnectionPool`).
 * Cancelling an operation leaks nothing: its connection goes back to the pool (closed when its
 * wire state is unknown), a cursor still open on the server is killed.
 *
 * **Closing.** [closeSuspending] (or [close], its blocking form for Java and `use`) refuses new
 * operations, fails operations still waiting, stops every monitor and pool and returns when
 * every coroutine of the cluster has stopped, after publishing ServerClosed, the final
 * TopologyDescriptionChanged (to Unknown) and TopologyClosed. [close] with a grace period lets
 * operations that hold a connection finish first. After close every operation fails with
 * [MongoClusterClosedException]; [topology] stays readable.
 *
 * **`rawData`.** A command run by [runRetryableRead], [runRetryableWrite] or [runCursorCommand]
 * (the helpers' paths) is sent without its `rawData` field to a server older than MongoDB 8.2
 * (wire version 27), decided per attempt on the connection it goes over (crud.md: the option
 * "MUST NOT be sent when connected to pre-8.2 servers"); [runCommand] sends its command as given.
 */
public interface MongoCluster : AutoCloseable {
    /** The settings this cluster runs with (for `mongodb+srv`: after the seed list lookup). */
    public val settings: MongoClusterSettings

    /**
     * Appends [driverInfo] to the handshake metadata (handshake.md "Metadata updates after
     * MongoClient initialization"): connections created from now on send it; established
     * connections keep theirs, none is opened or closed for it, and no command is sent. A
     * [DriverInfo] equal to one already given (at construction or appended) changes nothing.
     * Thread-safe; takes effect for connections whose handshake starts after it returns.
     */
    public fun appendMetadata(driverInfo: DriverInfo)

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
    public val dispatcher: CoroutineDispatcher

    /** The current topology description; a conflated [StateFlow] (collectors see the latest). */
    public val topology: StateFlow<TopologyDescription>

    /** This cluster's topology id, carried by its SDAM events and log messages. */
    public val topologyId: TopologyId

    /**
     * Every event (CMAP, SDAM, heartbeat, command) in publication order, with the [EventBus] overflow
     * policy (a slow collector misses events and then sees an `EventsDropped`). Use
     * [addListener] to see every event.
     */
    public val events: SharedFlow<MooringEvent>

    /** The CMAP pool and connection events of [events]. */
    public val poolEvents: Flow<ConnectionPoolEvent>

    /** The command monitoring events of [events]: started, succeeded, failed (application commands only). */
    public val commandEvents: Flow<CommandEvent>

    /** The SDAM server events of [events]: opening, description changed, closed. */
    public val serverEvents: Flow<ServerEvent>

    /** The SDAM topology events of [events]: opening, description changed, closed. */
    public val topologyEvents: Flow<TopologyEvent>

    /** The server heartbeat events of [events]: started, then succeeded or failed. */
    public val heartbeatEvents: Flow<ServerHeartbeatEvent>

    /** Registers a synchronous [listener] that sees every event from now on; close the handle to remove it. */
    public fun addListener(listener: EventListener): AutoCloseable

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
    ): BsonDocument

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
    ): BsonDocument

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
    ): Flow<BsonDocument>

    /**
     * Starts an explicit session (driver-sessions.md `startSession`) for this cluster's
     * operations; see [ClientSession]. Takes a server session from the cluster's pool (no I/O).
     * Fails with [MongoClusterClosedException] after close.
     */
    public fun startSession(): ClientSession

    /**
     * Starts an explicit session with [options] (causal consistency, snapshot reads, default
     * transaction options; see [ClientSessionOptions]), as [startSession] does. The session's
     * transactions inherit what [options] leaves unset from this cluster's settings (read concern
     * level, write concern, read preference).
     */
    public fun startSession(options: ClientSessionOptions): ClientSession

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
    public suspend fun runRetryableWrite(database: String, command: Bson, session: ClientSession? = null, timeoutMS: Long? = null): BsonDocument

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
    ): T

    /** Gauges of every current pool, read from the pools' own state (non-blocking snapshots). */
    public fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics>

    /** Closes at once (grace period zero); see [close] with a grace period. Idempotent; completes when cancelled. */
    public suspend fun closeSuspending()

    /**
     * Graceful close: refuses new operations at once, fails operations still selecting or
     * waiting in a pool's queue (`PoolClosedException`), lets operations that hold a connection
     * finish within [gracePeriod], interrupts the rest, then stops every monitor and pool and
     * returns when all of the cluster's coroutines have stopped. Idempotent; concurrent calls
     * wait for the first; completes even when the caller is cancelled.
     */
    public suspend fun close(gracePeriod: Duration)

    /**
     * Closes the cluster from blocking code (Java, `use`): runs [closeSuspending] in a
     * dedicated coroutine and blocks the calling thread until it has finished (no
     * `runBlocking`). From a coroutine call [closeSuspending] instead, so no thread is blocked.
     */
    override fun close()

    public companion object {
        /** A cluster built with the settings DSL: `MongoCluster { hosts("a:27017"); replicaSet = "rs0" }`. */
        @JvmSynthetic
        public operator fun invoke(block: MongoClusterSettingsBuilder.() -> Unit): MongoCluster = MongoCluster(mongoClusterSettings(block))
    }
}

// The factory functions. Creating a cluster does no I/O but one: for `mongodb+srv` the seed list
// lookup (below). Each validates the settings, publishes the opening events and starts the
// monitors as coroutines of the cluster's own scope (`SupervisorJob() + Dispatchers.Default`,
// never the caller's); sockets are opened by them.

/**
 * A cluster for [settings]. Throws [InvalidSettingsException] subtypes for settings the specs
 * forbid, and for a setting Mooring parses but cannot honour (`readConcernLevel`,
 * `tlsDisableOCSPEndpointCheck`, `tlsDisableCertificateRevocationCheck`). For a `mongodb+srv`
 * seed list ([MongoClusterSettings.srvHost]) the SRV and TXT records are looked up here (on
 * `Dispatchers.IO`, bounded by [DnsResolverSettings.timeoutMS]; the SDAM spec's one exception to
 * "no I/O at construction"), and for a sharded or not yet known topology SRV polling then runs as
 * a coroutine of the cluster. The opening events are published before this returns.
 */
public fun MongoCluster(settings: MongoClusterSettings): MongoCluster = DefaultMongoCluster(settings, null, emptyList())

/**
 * A cluster for [settings] whose [listeners] are registered before anything is published,
 * so they also see the opening events (TopologyOpening, ServerOpening, ...). Errors as for the
 * one-argument form.
 */
public fun MongoCluster(settings: MongoClusterSettings, listeners: List<EventListener>): MongoCluster =
    DefaultMongoCluster(settings, null, listeners)

/** A cluster for the connection string [uri]. Throws [InvalidConnectionStringException] for a malformed URI. */
public fun MongoCluster(uri: String): MongoCluster = DefaultMongoCluster(SrvSeedlistDiscovery.settingsFromUri(uri), null, emptyList())

/**
 * A cluster for the connection string [uri] whose DNS queries (mongodb+srv) go to [dnsResolver].
 * Throws [InvalidConnectionStringException] for a malformed URI or SRV/TXT answers that break
 * the seedlist rules, [DnsLookupException] when a DNS query fails.
 */
public fun MongoCluster(uri: String, dnsResolver: DnsResolverSettings): MongoCluster = MongoCluster(uri, dnsResolver, emptyList())

/**
 * A cluster for the connection string [uri] (DNS queries of `mongodb+srv` to [dnsResolver])
 * whose [listeners] are registered before anything is published. For `mongodb+srv` the seed
 * list is looked up here (blocking the calling thread), and an option the URI states wins
 * over the TXT record's (initial-dns-seedlist-discovery.md); every URI factory function, and the
 * Java facade's `MongoClusters.create(uri)`, goes through this rule. Errors as for the
 * two-argument form.
 */
public fun MongoCluster(uri: String, dnsResolver: DnsResolverSettings, listeners: List<EventListener>): MongoCluster =
    DefaultMongoCluster(SrvSeedlistDiscovery.settingsFromUri(uri, dnsResolver), null, listeners)
