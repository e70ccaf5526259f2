package dev.mooring.java.internal

import dev.mooring.sdam.withTransaction
import dev.mooring.sdam.TransactionOptions
import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.java.ClusterListener
import dev.mooring.java.CommandListener
import dev.mooring.java.ConnectionPoolListener
import dev.mooring.java.JavaConnection
import dev.mooring.java.JavaMongoCluster
import dev.mooring.java.JavaMongoDatabase
import dev.mooring.driver.ChangeStream
import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.database
import dev.mooring.driver.watch
import dev.mooring.java.JavaChangeStream
import dev.mooring.java.ListenerRegistration
import dev.mooring.java.ServerListener
import dev.mooring.java.ServerMonitorListener
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.supervisorScope
import dev.mooring.sdam.internal.tracing.CallerTracingContext
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.future.await
import dev.mooring.driver.ClientBulkWriteOptions
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.bulkWrite
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
 * The [JavaMongoCluster] implementation; see the interface for the contracts. [open] creates the
 * Kotlin cluster with the facade's listener registered first: the same constructor a Kotlin
 * caller uses (for a URI, `MongoCluster(uri, dnsResolver, listeners)`, so a `mongodb+srv` URI's
 * options win over its TXT record's by the one rule of initial-dns-seedlist-discovery.md).
 */
internal class DefaultJavaMongoCluster(
    open: (List<EventListener>) -> MongoCluster,
    initialListeners: List<ListenerAdapter>,
    eventBufferCapacity: Int,
) : JavaMongoCluster {
    constructor(settings: MongoClusterSettings, initialListeners: List<ListenerAdapter>, eventBufferCapacity: Int) :
        this({ listeners -> MongoCluster(settings, listeners) }, initialListeners, eventBufferCapacity)

    private val dispatcher = ListenerDispatcher()
    private val cluster: MongoCluster
    private val job = SupervisorJob()
    private val scope = CoroutineScope(job + Dispatchers.Default + CoroutineName("mooring-java"))
    private val closerJob = Job()
    private val closerScope = CoroutineScope(closerJob + Dispatchers.IO + CoroutineName("mooring-java-close"))
    private val publisher = EventPublisher(dispatcher, Dispatchers.Default.asExecutor(), eventBufferCapacity)
    private val closing = AtomicBoolean()
    private val closed = CompletableFuture<Void?>()

    init {
        initialListeners.forEach { dispatcher.add(it) }
        try {
            cluster = open(listOf(dispatcher))
        } catch (e: Throwable) {
            job.cancel()
            throw e
        }
    }

    override fun settings(): MongoClusterSettings = cluster.settings

    override fun topologyId(): TopologyId = cluster.topologyId

    override fun topology(): TopologyDescription = cluster.topology.value

    override fun poolStatistics(): Map<ServerAddress, ConnectionPoolStatistics> = cluster.poolStatistics()

    override fun runCommand(database: String, command: Bson): CompletableFuture<BsonDocument> =
        runCommand(database, command, ReadPreference.PRIMARY)

    override fun runCommand(database: String, command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument> =
        operation { cluster.runCommand(database, command, readPreference) }

    override fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableRead(database, command, readPreference) }

    override fun runRetryableWrite(database: String, command: Bson): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableWrite(database, command) }

    override fun runCommand(database: String, command: Bson, readPreference: ReadPreference, session: ClientSession): CompletableFuture<BsonDocument> =
        operation { cluster.runCommand(database, command, readPreference, session) }

    override fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference, session: ClientSession): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableRead(database, command, readPreference, session) }

    override fun runRetryableWrite(database: String, command: Bson, session: ClientSession): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableWrite(database, command, session) }

    override fun startSession(): ClientSession = cluster.startSession()

    override fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>): CompletableFuture<ClientBulkWriteResult> =
        bulkWrite(models, ClientBulkWriteOptions(), null)

    override fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>, options: ClientBulkWriteOptions): CompletableFuture<ClientBulkWriteResult> =
        bulkWrite(models, options, null)

    override fun bulkWrite(models: List<ClientNamespacedWriteModel<*>>, options: ClientBulkWriteOptions, session: ClientSession?): CompletableFuture<ClientBulkWriteResult> =
        operation { cluster.bulkWrite(models, options, session) }

    override fun <T> withTransaction(function: Function<ClientSession, out CompletionStage<T>>): CompletableFuture<T> =
        withTransaction(TransactionOptions(), function)

    override fun <T> withTransaction(options: TransactionOptions, function: Function<ClientSession, out CompletionStage<T>>): CompletableFuture<T> =
        future {
            cluster.withTransaction(options) { session ->
                (function.apply(session) ?: throw NullPointerException("the withTransaction function returned null instead of a CompletionStage")).await()
            }
        }

    override fun runCursorCommand(database: String, command: Bson): Flow.Publisher<BsonDocument> =
        runCursorCommand(database, command, RunCursorCommandOptions())

    override fun runCursorCommand(database: String, command: Bson, options: RunCursorCommandOptions): Flow.Publisher<BsonDocument> {
        val pages = CursorPage.pages(cluster, database, command, options) // validates now; cold
        return CursorPublisher.ofPages(scope) { pages }
    }

    override fun runCommand(database: String, command: Bson, readPreference: ReadPreference, timeoutMS: Long): CompletableFuture<BsonDocument> =
        operation { cluster.runCommand(database, command, readPreference, timeoutMS = timeoutMS) }

    override fun runRetryableRead(database: String, command: Bson, readPreference: ReadPreference, timeoutMS: Long): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableRead(database, command, readPreference, timeoutMS = timeoutMS) }

    override fun runRetryableWrite(database: String, command: Bson, timeoutMS: Long): CompletableFuture<BsonDocument> =
        operation { cluster.runRetryableWrite(database, command, timeoutMS = timeoutMS) }

    override fun <T> withConnection(function: Function<in JavaConnection, out CompletionStage<T>>): CompletableFuture<T> =
        withConnection(ReadPreference.PRIMARY, function)

    override fun <T> withConnection(
        readPreference: ReadPreference,
        function: Function<in JavaConnection, out CompletionStage<T>>,
    ): CompletableFuture<T> = future {
        cluster.withConnection(readPreference) { connection ->
            // A supervisor scope: a command that fails completes its own future exceptionally and lets
            // the user's stage recover from it, instead of failing the whole withConnection.
            // The scope still waits for commands in flight before the connection goes back.
            supervisorScope {
                val lent = LentConnection(connection, this)
                try {
                    val stage = function.apply(lent) ?: throw NullPointerException("the withConnection function returned null instead of a CompletionStage")
                    stage.await()
                } finally {
                    lent.endLending()
                }
            }
        }
    }

    override fun addConnectionPoolListener(listener: ConnectionPoolListener): ListenerRegistration = dispatcher.add(ListenerAdapters.pool(listener))

    override fun addServerMonitorListener(listener: ServerMonitorListener): ListenerRegistration = dispatcher.add(ListenerAdapters.monitor(listener))

    override fun addServerListener(listener: ServerListener): ListenerRegistration = dispatcher.add(ListenerAdapters.server(listener))

    override fun addClusterListener(listener: ClusterListener): ListenerRegistration = dispatcher.add(ListenerAdapters.cluster(listener))

    override fun addCommandListener(listener: CommandListener): ListenerRegistration = dispatcher.add(ListenerAdapters.command(listener))

    override fun addEventListener(listener: EventListener): ListenerRegistration = dispatcher.add(ListenerAdapters.any(listener))

    override fun removeListener(listener: Any): Boolean = dispatcher.remove(listener)

    override fun events(): Flow.Publisher<MooringEvent> = publisher

    override fun isClosed(): Boolean = closing.get()

    override fun asMongoCluster(): MongoCluster = cluster

    override fun closeAsync(): CompletableFuture<Void?> = closeAsync(Duration.ZERO)

    override fun closeAsync(gracePeriod: Duration): CompletableFuture<Void?> {
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
            closerJob.complete() // completes once the close coroutine above has finished
        }
        return closed.copy()
    }

    override fun close() {
        closeAsync().join()
    }

    /** The documents of a cursor flow as a publisher on the facade's scope ([CursorPublisher.ofDocuments]). */
    internal fun <T : Any> publisher(documents: kotlinx.coroutines.flow.Flow<T>): Flow.Publisher<T> = CursorPublisher.ofDocuments(scope, documents)

    /** [stream] as a [JavaChangeStream]: its events as a [publisher], its resume token read live. */
    internal fun <T : Any> changeStream(stream: ChangeStream<T>): JavaChangeStream<T> {
        val events = publisher(stream)
        return object : JavaChangeStream<T> {
            override fun getResumeToken(): BsonDocument? = stream.resumeToken

            override fun subscribe(subscriber: Flow.Subscriber<in ChangeStreamDocument<T>>) = events.subscribe(subscriber)
        }
    }

    override fun watch(): JavaChangeStream<BsonDocument> = watch(emptyList(), ChangeStreamOptions(), null)

    override fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<BsonDocument> =
        changeStream(cluster.watch(pipeline, options, session))

    override fun toString(): String = "JavaMongoCluster(${cluster.topologyId}, ${topology().type})"

    override fun getDatabase(name: String): JavaMongoDatabase =
        DefaultJavaMongoDatabase(this, cluster.database(name), dev.mooring.java.JavaCodecRegistries.DEFAULT)

    /**
     * [block] as a coroutine of the facade's scope (Dispatchers.Default; cancelling the future
     * cancels it); a future failed with [MongoClusterClosedException] once the cluster is closing.
     * For blocks that run the caller's code (a transaction's or a lent connection's function, an
     * upload's source): that code may block, so it never runs on an event loop.
     */
    internal fun <T> future(block: suspend CoroutineScope.() -> T): CompletableFuture<T> {
        if (closing.get() || !job.isActive) return CompletableFuture.failedFuture(MongoClusterClosedException("the cluster is closed"))
        return scope.future(CallerTracingContext.current(cluster), block = block) // the caller's span is the parent (when tracing)
    }

    /**
     * One operation that runs none of the caller's code, as a future: it starts on the calling
     * thread (server selection, checkout and the request's write happen there, none of which
     * blocks) and continues on the cluster's event loops ([MongoCluster.dispatcher]), where the
     * reply is read, decoded and the future completed, on the thread that saw the reply arrive.
     * A Java thread waiting for the result is then woken once, by that thread, as a thread
     * blocked in a socket read is by the kernel; through [future] it took three hand-offs more
     * (to a `Dispatchers.Default` worker, from it to a loop and back, and to the caller).
     * Cancellation and closing as [future].
     */
    internal fun <T> operation(block: suspend CoroutineScope.() -> T): CompletableFuture<T> {
        if (closing.get() || !job.isActive) return CompletableFuture.failedFuture(MongoClusterClosedException("the cluster is closed"))
        return scope.future(CallerTracingContext.current(cluster) + cluster.dispatcher, CoroutineStart.UNDISPATCHED, block)
    }
}
