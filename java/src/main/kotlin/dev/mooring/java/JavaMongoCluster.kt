package dev.mooring.java

import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.java.internal.EventPublisher
import dev.mooring.java.internal.ListenerAdapter
import dev.mooring.java.internal.ListenerAdapters
import dev.mooring.java.internal.ListenerDispatcher
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import kotlinx.coroutines.launch
import org.bson.BsonDocument
import org.bson.conversions.Bson
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.Flow
import java.util.concurrent.atomic.AtomicBoolean
import java.util.function.Function
import kotlin.time.toKotlinDuration

/**
 * The Java face of a [MongoCluster]: the same live topology, pools, server selection and SDAM
 * error handling, with `CompletableFuture`s instead of suspending functions, Java listener
 * interfaces instead of Kotlin flows, and a [Flow.Publisher] of events. Create one with
 * [MongoClusters.create]; one per application, shared by all threads.
 *
 * ```java
 * try (JavaMongoCluster cluster = MongoClusters.create("mongodb://localhost:27017")) {
 *     BsonDocument reply = cluster.runCommand("admin", new BsonDocument("ping", new BsonInt32(1))).join();
 * }
 * ```
 *
 * **Concurrency.** Every method is thread-safe and none blocks, except [close] (which waits for
 * the shutdown) and the snapshot getters (which only read). Operations run as coroutines of
 * this facade's own scope (a `SupervisorJob` on `Dispatchers.Default`, never a global one), and
 * their futures complete on Mooring's threads: don't block in `thenApply`/`thenAccept`
 * callbacks (use the `*Async` variants with your own executor for blocking work).
 *
 * **Cancellation.** `cancel(true)` (or `cancel(false)`) on a returned future cancels the
 * operation: a selection or checkout stops waiting, a command in flight is abandoned and its
 * connection closed, a checked-out connection goes back to the pool. Nothing leaks: the pool's
 * statistics return to idle.
 *
 * **Closing.** [close] (from `AutoCloseable`, so try-with-resources works) refuses new
 * operations, fails those still waiting, interrupts those in flight, stops the monitors and
 * pools, publishes the closing events to the listeners, completes the event publisher's
 * subscribers and returns when all of it has finished; [closeAsync] does the same without
 * blocking. After close, operations return futures that have failed with
 * [MongoClusterClosedException]; [topology] and [poolStatistics] stay readable. Don't call
 * [close] from a listener or from a callback running on a Mooring thread: use [closeAsync].
 */
public class JavaMongoCluster internal constructor(
    settings: MongoClusterSettings,
    initialListeners: List<ListenerAdapter>,
    eventBufferCapacity: Int,
) : AutoCloseable {
    private val dispatcher = ListenerDispatcher()
    private val cluster: MongoCluster
    private val job = SupervisorJob()
    private val scope = CoroutineScope(job + Dispatchers.Default + CoroutineName("mooring-java"))
    private val closerScope = CoroutineScope(Job() + Dispatchers.IO + CoroutineName("mooring-java-close"))
    private val publisher = EventPublisher(dispatcher, Dispatchers.Default.asExecutor(), eventBufferCapacity)
    private val closing = AtomicBoolean()
    private val closed = CompletableFuture<Void?>()

    init {
        initialListeners.forEach { dispatcher.add(it) }
        try {
            cluster = MongoCluster(settings, listOf(dispatcher))
        } catch (e: Throwable) {
            job.cancel()
            throw e
        }
    }

    /** The settings this cluster was built with (the same object the Kotlin DSL and URIs produce). */
    public fun settings(): MongoClusterSettings = cluster.settings

    /** This cluster's topology id, carried by its SDAM events. */
    public fun topologyId(): TopologyId = cluster.topologyId

    /** A snapshot of the current topology description. Never blocks; readable after [close]. */
    public fun topology(): TopologyDescription = cluster.topology.value

    /**
     * Gauges of every current pool (total, available, pending, in use, wait queue, generation),
     * read from the pools' own state. Never blocks; readable after [close].
     */
    public fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics> = cluster.poolStatistics()

    /** Runs [command] on [database] on a primary; see the overload with a read preference. */
    public fun runCommand(database: String, command: Bson): CompletableFuture<BsonDocument> =
        runCommand(database, command, ReadPreference.PRIMARY)

    /**
     * Runs [command] on [database] on a server selected by [readPreference] and completes with
     * the reply, or exceptionally with the error `MongoCluster.runCommand` documents
     * (`MongoServerSelectionTimeoutException`, `MongoCommandException`, network and pool
     * errors, [MongoClusterClosedException], [IllegalArgumentException] for an empty database
     * name or command). Cancelling the future cancels the operation.
     */
    public fun runCommand(database: String, command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument> =
        launch { cluster.runCommand(database, command, readPreference) }

    /** [withConnection] on a primary. */
    public fun <T> withConnection(function: Function<in JavaConnection, out CompletionStage<T>>): CompletableFuture<T> =
        withConnection(ReadPreference.PRIMARY, function)

    /**
     * Checks out a connection to a server selected by [readPreference], calls [function] with it
     * and completes with the result of the stage it returns; the connection goes back to the
     * pool when that stage completes (and any command still running on it has finished). The
     * connection must not be used afterwards. Errors of the stage go through SDAM error
     * handling like those of [runCommand]; there is no retry. Cancelling the returned future
     * cancels the stage (when it is a `Future`) and any command in flight, and returns the
     * connection. [function] runs on a Mooring thread and must not block.
     */
    public fun <T> withConnection(
        readPreference: ReadPreference,
        function: Function<in JavaConnection, out CompletionStage<T>>,
    ): CompletableFuture<T> = launch {
        cluster.withConnection(readPreference) { connection ->
            coroutineScope {
                val lent = JavaConnection(connection, this)
                try {
                    val stage = function.apply(lent) ?: throw NullPointerException("the withConnection function returned null instead of a CompletionStage")
                    stage.await()
                } finally {
                    lent.endLending()
                }
            }
        }
    }

    /** Registers [listener] for this cluster's CMAP events from now on; close the handle to remove it. */
    public fun addConnectionPoolListener(listener: ConnectionPoolListener): ListenerRegistration = dispatcher.add(ListenerAdapters.pool(listener))

    /** Registers [listener] for this cluster's heartbeat events from now on; close the handle to remove it. */
    public fun addServerMonitorListener(listener: ServerMonitorListener): ListenerRegistration = dispatcher.add(ListenerAdapters.monitor(listener))

    /** Registers [listener] for this cluster's server events from now on; close the handle to remove it. */
    public fun addServerListener(listener: ServerListener): ListenerRegistration = dispatcher.add(ListenerAdapters.server(listener))

    /** Registers [listener] for this cluster's topology events from now on; close the handle to remove it. */
    public fun addClusterListener(listener: ClusterListener): ListenerRegistration = dispatcher.add(ListenerAdapters.cluster(listener))

    /** Registers [listener] for every event of this cluster from now on; close the handle to remove it. */
    public fun addEventListener(listener: EventListener): ListenerRegistration = dispatcher.add(ListenerAdapters.any(listener))

    /**
     * Removes every registration of [listener] (made here or on the settings builder); returns
     * whether there was one. Thread-safe.
     */
    public fun removeListener(listener: Any): Boolean = dispatcher.remove(listener)

    /**
     * Every event of this cluster as a [Flow.Publisher] for reactive users. Each subscriber sees
     * the events published after its `subscribe` call, in publication order, as it requests
     * them; it is completed after the closing events when the cluster closes (at once when it
     * is already closed). A subscriber more than the event buffer capacity behind misses events
     * and is then sent an `EventsDropped` with their count (listeners never miss events).
     * Signals are serialized and delivered on Mooring's threads; cancelling a subscription
     * unregisters it.
     */
    public fun events(): Flow.Publisher<MooringEvent> = publisher

    /** True once [close] or [closeAsync] was called. */
    public fun isClosed(): Boolean = closing.get()

    /** The underlying Kotlin cluster, for code that mixes Kotlin and Java. */
    public fun asMongoCluster(): MongoCluster = cluster

    /** [closeAsync] with no grace period. */
    public fun closeAsync(): CompletableFuture<Void?> = closeAsync(Duration.ZERO)

    /**
     * Starts closing without blocking and returns a future completed when the cluster has
     * fully closed (see [close]). Operations holding a connection may finish within
     * [gracePeriod] before they are interrupted. Idempotent: later calls return a future of the
     * first close (their grace period is ignored). Cancelling the returned future does not stop
     * the close.
     */
    public fun closeAsync(gracePeriod: Duration): CompletableFuture<Void?> {
        require(!gracePeriod.isNegative) { "gracePeriod must not be negative, was $gracePeriod" }
        if (closing.compareAndSet(false, true)) {
            closerScope.launch {
                try {
                    cluster.close(gracePeriod.toKotlinDuration())
                    job.cancelAndJoin()
                    publisher.completeAll()
                    dispatcher.clear()
                    closed.complete(null)
                } catch (t: Throwable) {
                    closed.completeExceptionally(t)
                }
            }
        }
        return closed.copy()
    }

    /** Closes the cluster and blocks until it has closed; see the class documentation. Idempotent. */
    override fun close() {
        closeAsync().join()
    }

    override fun toString(): String = "JavaMongoCluster(${cluster.topologyId}, ${topology().type})"

    private fun <T> launch(block: suspend CoroutineScope.() -> T): CompletableFuture<T> {
        if (closing.get()) return CompletableFuture.failedFuture(MongoClusterClosedException("the cluster is closed"))
        return scope.future(block = block)
    }
}
