package dev.mooring.java

import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.driver.ClientBulkWriteException
import dev.mooring.driver.ClientBulkWriteOptions
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TransactionOptions
import org.bson.BsonDocument
import org.bson.conversions.Bson
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.Flow
import java.util.function.Function

/**
 * The Java face of a [MongoCluster]: the same live topology, pools, server selection and SDAM
 * error handling, with `CompletableFuture`s instead of suspending functions, Java listener
 * interfaces instead of Kotlin flows, and a [Flow.Publisher] of events. Create one with
 * [MongoClusters.create]; one per application, shared by all threads. (An interface so tests
 * can stub it; Mooring provides the only implementation.)
 *
 * ```java
 * try (JavaMongoCluster cluster = MongoClusters.create("mongodb://localhost:27017")) {
 *     BsonDocument reply = cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1))).join();
 * }
 * ```
 *
 * **Concurrency.** Every method is thread-safe and none blocks, except [close] (which waits for
 * the shutdown); the snapshot getters only read. Operations run as coroutines of the cluster
 * facade's own scope (a `SupervisorJob`, never a global scope). A single operation (a command,
 * a CRUD call, a bulk write) starts on the calling thread, which selects the server, checks out
 * a connection and writes the request without blocking, and continues on the cluster's event
 * loops, where its reply is read and its future completed; what runs your code (a transaction's
 * or a lent connection's function, an upload's source) runs on `Dispatchers.Default`. Either way
 * futures complete on Mooring's threads: don't block in `thenApply`/`thenAccept` callbacks (use
 * the `*Async` variants with your own executor for blocking work).
 *
 * **Cancellation.** `cancel(true)` (or `cancel(false)`) on a returned future cancels the
 * operation: a selection or checkout stops waiting, a command in flight is abandoned and its
 * connection closed, a checked-out connection goes back to the pool. Nothing leaks: the pool's
 * statistics return to idle.
 *
 * **Events.** Listeners (registered here or on [ClusterSettingsBuilder]) are called
 * synchronously, one event at a time for the whole cluster, so all listeners and publisher
 * subscribers of a cluster see the same order of its events (the publication order). A
 * listener that throws is logged and skipped; it never breaks a pool or a monitor.
 *
 * **Closing.** [close] (from `AutoCloseable`, so try-with-resources works, without a checked
 * exception) refuses new operations, fails those still waiting, interrupts those in flight,
 * stops the monitors and pools, publishes the closing events to the listeners, completes the
 * event publisher's subscribers and returns when all of it has finished; [closeAsync] does the
 * same without blocking. After close, operations return futures that have failed with
 * [MongoClusterClosedException]; [topology] and [poolStatistics] stay readable. Don't call
 * [close] from a listener or from a callback running on a Mooring thread: use [closeAsync].
 */
public interface JavaMongoCluster : AutoCloseable {
    /** The settings this cluster was built with (the same object the Kotlin DSL and URIs produce). */
    public fun settings(): MongoClusterSettings

    /** This cluster's topology id, carried by its SDAM events. */
    public fun topologyId(): TopologyId

    /** A snapshot of the current topology description. Never blocks; readable after [close]. */
    public fun topology(): TopologyDescription

    /**
     * Gauges of every current pool (total, available, pending, in use, wait queue, generation),
     * read from the pools' own state. Never blocks; readable after [close].
     */
    public fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics>

    /** Runs [command] on [database] on the primary; see the overload with a read preference. */
    public fun runCommand(database: String, command: Bson): CompletableFuture<BsonDocument>

    /**
     * Runs [command] on [database] on a server selected by [readPreference] and completes with
     * the reply, or exceptionally with the error `MongoCluster.runCommand` documents
     * (`MongoServerSelectionTimeoutException`, `MongoCommandException`, network and pool
     * errors, [MongoClusterClosedException], [IllegalArgumentException] for an empty database
     * name or command). Cancelling the future cancels the operation.
     */
    public fun runCommand(database: String, command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument>

    /**
     * Runs the read [command] on [database] as a retryable read (retried once on a retryable
     * error when retryReads is on); completes as `MongoCluster.runRetryableRead` documents.
     * Cancelling the future cancels the operation, including a retry in progress.
     */
    public fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument>

    /**
     * Runs the write [command] on [database] as a retryable write (implicit session and
     * txnNumber, retried once on a retryable error when retryWrites is on and the deployment
     * supports it); completes as `MongoCluster.runRetryableWrite` documents. Cancelling the
     * future cancels the operation, including a retry in progress.
     */
    public fun runRetryableWrite(database: String, command: Bson): CompletableFuture<BsonDocument>

    /**
     * [runCommand] in the explicit [session] (its `lsid`); completes exceptionally with
     * `MongoSessionNotSupportedException` on a server without sessions.
     */
    public fun runCommand(database: String, command: Bson, readPreference: ReadPreference, session: ClientSession): CompletableFuture<BsonDocument>

    /** [runRetryableRead] in the explicit [session]. */
    public fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference, session: ClientSession): CompletableFuture<BsonDocument>

    /** [runRetryableWrite] in the explicit [session] (its `lsid` and next `txnNumber`). */
    public fun runRetryableWrite(database: String, command: Bson, session: ClientSession): CompletableFuture<BsonDocument>

    /**
     * Starts an explicit session for this cluster's operations (`MongoCluster.startSession`):
     * close it (try-with-resources) to return its server session. Never blocks.
     */
    public fun startSession(): ClientSession

    /**
     * `withTransaction` in a session of its own (`MongoCluster.withTransaction`,
     * transactions-convenient-api.md): starts a session and a transaction, completes with the
     * value of the stage [function] returns after committing it, and ends the session. **The
     * function may be called several times**: the whole transaction is retried when it (or the
     * commit) fails with an error labelled `TransientTransactionError`, the commit alone on
     * `UnknownTransactionCommitResult`, for up to 120 s (or the cluster's timeoutMS). When the
     * stage fails, or the returned future is cancelled while the function's stage runs, the
     * transaction is aborted before the future completes. Operations of the function must be given
     * the session to run in the transaction. Never blocks.
     */
    public fun <T> withTransaction(function: Function<ClientSession, out CompletionStage<T>>): CompletableFuture<T>

    /** [withTransaction] with the transaction's [options] (read concern level, write concern, read preference, maxCommitTimeMS). */
    public fun <T> withTransaction(options: TransactionOptions, function: Function<ClientSession, out CompletionStage<T>>): CompletableFuture<T>

    /** [runCursorCommand] with the default options (primary, implicit session, the cluster's timeoutMS). */
    public fun runCursorCommand(database: String, command: Bson): Flow.Publisher<BsonDocument>

    /**
     * The results of the cursor-returning [command] (`find`, `aggregate`, `listCollections`, ...)
     * on [database] as a cold [Flow.Publisher] (`MongoCluster.runCursorCommand`): each
     * subscription runs the command anew at its first `request`, receives the documents as it
     * requests them, and the next `getMore` (on the cursor's server, or its pinned connection in
     * load-balanced mode, with the same `lsid`) is sent only when the subscriber has demand after
     * the batch before it. `onComplete` follows the last document of an exhausted cursor;
     * `onError` carries the errors `MongoCluster.runCursorCommand` documents (and an
     * `IllegalArgumentException` for `request(n)` with n ≤ 0, a `MongoClusterClosedException`
     * when the cluster closes before the subscription ended). `cancel()` ends the cursor: a
     * cursor still open on the server is killed with `killCursors` (bounded), and its connection
     * and session go back; a subscriber whose `onNext` throws is cancelled the same way.
     * Signals to one subscriber are serialized, none before `onSubscribe` returns, and arrive on
     * Mooring's threads (don't block in them); after `cancel()` nothing is signalled. [IllegalArgumentException] at once for an empty database name or command, or
     * options that conflict with the cluster's timeoutMS.
     */
    public fun runCursorCommand(database: String, command: Bson, options: RunCursorCommandOptions): Flow.Publisher<BsonDocument>

    /**
     * [runCommand] with this call's client-side operation timeout [timeoutMS] instead of the
     * cluster's (0 = no limit; negative: the future fails with [IllegalArgumentException]): it
     * bounds selection, checkout, the command (sent with `maxTimeMS` = remaining time minus the
     * server's minimum round trip time) and retries; expiry and the server's MaxTimeMSExpired
     * complete the future with `MongoOperationTimeoutException` (see `MongoCluster.runCommand`).
     */
    public fun runCommand(database: String, command: Bson, readPreference: ReadPreference, timeoutMS: Long): CompletableFuture<BsonDocument>

    /** [runRetryableRead] with this call's [timeoutMS] (see the [runCommand] overload with a timeout); retries as often as it allows. */
    public fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference, timeoutMS: Long): CompletableFuture<BsonDocument>

    /** [runRetryableWrite] with this call's [timeoutMS] (see the [runCommand] overload with a timeout); retries as often as it allows. */
    public fun runRetryableWrite(database: String, command: Bson, timeoutMS: Long): CompletableFuture<BsonDocument>

    /** [withConnection] on the primary. */
    public fun <T> withConnection(function: Function<in JavaConnection, out CompletionStage<T>>): CompletableFuture<T>

    /**
     * Checks out a connection to a server selected by [readPreference], calls [function] with it
     * and completes with the result of the stage it returns; the connection goes back to the
     * pool when that stage completes (and any command still running on it has finished). The
     * connection must not be used afterwards. Errors of the stage go through SDAM error
     * handling like those of [runCommand]; there is no retry (the function may not be
     * idempotent). Cancelling the returned future cancels the stage (when it is a `Future`) and
     * any command in flight, and returns the connection. [function] runs on a Mooring thread
     * and must not block.
     */
    public fun <T> withConnection(
        readPreference: ReadPreference,
        function: Function<in JavaConnection, out CompletionStage<T>>,
    ): CompletableFuture<T>

    /**
     * The database [name] of this cluster (no I/O), with the cluster settings' read preference,
     * read concern, write concern and timeoutMS as defaults, and [JavaCodecRegistries.DEFAULT]
     * for typed collections. [IllegalArgumentException] for an empty name or one containing `.`,
     * `/`, `\`, `"`, `$`, a space or a NUL. Its operations fail with [MongoClusterClosedException]
     * once this cluster is closed.
     */
    public fun getDatabase(name: String): JavaMongoDatabase

    /** The changes to this cluster with no pipeline and the default options (see the other overload). */
    public fun watch(): JavaChangeStream<BsonDocument>

    /**
     * The changes to every database of this cluster but `admin`, `local` and `config`
     * (`MongoCluster.watch`, change-streams.md `MongoClient.watch`: `aggregate: 1` on `admin` with
     * `allChangesForCluster`; MongoDB 4.0+), with [pipeline] after the `$changeStream` stage and
     * [options], under the cluster settings' read preference, read concern and timeoutMS, in
     * [session] (a null one runs in an implicit session), as a resumable cold publisher of events
     * whose full documents are [BsonDocument]s (see [JavaChangeStream]). No I/O until a subscriber
     * requests; once the cluster is closed a subscription ends with `onError`.
     */
    public fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<BsonDocument>

    /**
     * The client bulk write ([dev.mooring.driver.bulkWrite], bulk-write.md `MongoClient.bulkWrite`):
     * [models] on any namespaces (make them with [WriteModels.on] from a typed collection, or
     * `ClientNamespacedWriteModel.of(namespace, model)` for `BsonDocument`s) with default options.
     * The future fails as the suspending form throws: [ClientBulkWriteException] for write errors,
     * write concern errors and a top-level error after results were observed.
     */
    public fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>): CompletableFuture<ClientBulkWriteResult>

    /** [bulkWrite] with [options]. */
    public fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>, options: ClientBulkWriteOptions): CompletableFuture<ClientBulkWriteResult>

    /** [bulkWrite] with [options] in [session] (null: a session of the bulk write's own). */
    public fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>, options: ClientBulkWriteOptions, session: ClientSession?): CompletableFuture<ClientBulkWriteResult>

    /** Registers [listener] for this cluster's CMAP events from now on; close the handle to remove it. */
    public fun addConnectionPoolListener(listener: ConnectionPoolListener): ListenerRegistration

    /** Registers [listener] for this cluster's heartbeat events from now on; close the handle to remove it. */
    public fun addServerMonitorListener(listener: ServerMonitorListener): ListenerRegistration

    /** Registers [listener] for this cluster's server events from now on; close the handle to remove it. */
    public fun addServerListener(listener: ServerListener): ListenerRegistration

    /** Registers [listener] for this cluster's topology events from now on; close the handle to remove it. */
    public fun addClusterListener(listener: ClusterListener): ListenerRegistration

    /** Registers [listener] for this cluster's command monitoring events from now on; close the handle to remove it. */
    public fun addCommandListener(listener: CommandListener): ListenerRegistration

    /** Registers [listener] for every event of this cluster from now on; close the handle to remove it. */
    public fun addEventListener(listener: EventListener): ListenerRegistration

    /**
     * Removes every registration of [listener] (made here or on the settings builder); returns
     * whether there was one.
     */
    public fun removeListener(listener: Any): Boolean

    /**
     * Every event of this cluster as a [Flow.Publisher] for reactive users. Each subscriber sees
     * the events published after its `subscribe` call, in publication order, as it requests
     * them; it is completed after the closing events when the cluster closes (at once when it
     * is already closed). A subscriber more than the event buffer capacity
     * ([ClusterSettingsBuilder.eventBufferCapacity]) behind misses events and is then sent an
     * `EventsDropped` with their count (listeners never miss events). Signals are serialized
     * and delivered on Mooring's threads; cancelling a subscription unregisters it; a
     * subscriber that throws is cancelled.
     */
    public fun events(): Flow.Publisher<MooringEvent>

    /** True once [close] or [closeAsync] was called. */
    public fun isClosed(): Boolean

    /** The underlying Kotlin cluster, for code that mixes Kotlin and Java. */
    public fun asMongoCluster(): MongoCluster

    /** [closeAsync] with no grace period. */
    public fun closeAsync(): CompletableFuture<Void?>

    /**
     * Starts closing without blocking and returns a future completed when the cluster has
     * fully closed (see [close]). Operations holding a connection may finish within
     * [gracePeriod] before they are interrupted; throws [IllegalArgumentException] for a
     * negative one. Idempotent: later calls return a future of the first close (their grace
     * period is ignored). Cancelling the returned future does not stop the close.
     */
    public fun closeAsync(gracePeriod: Duration): CompletableFuture<Void?>

    /** Closes the cluster and blocks until it has closed; see the interface documentation. Idempotent. */
    override fun close()
}
