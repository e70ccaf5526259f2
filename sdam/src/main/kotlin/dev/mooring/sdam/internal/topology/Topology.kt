package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.EstablishmentFailure
import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.ErrorHandling
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyAction
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologySettings
import dev.mooring.sdam.TopologyStateMachine
import dev.mooring.sdam.TopologyUpdate
import dev.mooring.sdam.internal.srv.SrvRecordsUpdate
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import org.bson.types.ObjectId
import kotlin.random.Random

/**
 * Internal API, not stable: the live topology of one cluster. It holds the
 * [TopologyDescription] in a [StateFlow] and owns one monitor and (once the server is usable)
 * one [ConnectionPool] per server.
 *
 * **One critical section.** Monitor outcomes ([onCheckOutcome]), application errors
 * ([onApplicationError]) and pool establishment errors go through one [Mutex]: the SDAM-core
 * pure step ([TopologyStateMachine], [ErrorHandling]) runs, then its actions are carried out in
 * order — pools created and marked ready *before* the new description is published, pools
 * cleared together with marking the server Unknown — then the description is published, the
 * SDAM events and log messages go out in the step's order, and finally new monitors start. No
 * I/O happens under the lock: closing a removed server's monitor and pool runs in a cleanup
 * coroutine that [close] waits for.
 *
 * **Scope.** Everything runs in a child [SupervisorJob] of [parentScope]'s job. [close] stops
 * every monitor and pool, publishes the closing events (ServerClosed per server,
 * TopologyDescriptionChanged to the empty Unknown description, TopologyClosed) and returns when
 * they have all stopped. After close, outcomes and errors are ignored and [pool] returns null.
 */
internal class Topology(
    /** The cluster settings. */
    internal val settings: MongoClusterSettings,
    private val eventBus: EventBus,
    private val connectionFactory: ConnectionFactory,
    private val monitorFactory: MonitorFactory,
    parentScope: CoroutineScope,
    /** The id carried by this topology's SDAM events and log messages. */
    internal val id: TopologyId = TopologyId.next(),
) {
    private val job = SupervisorJob(parentScope.coroutineContext[Job])
    private val scope = CoroutineScope(parentScope.coroutineContext + job)
    private val mutex = Mutex()
    private val state = MutableStateFlow(TopologyDescription.EMPTY)
    private val entries = LinkedHashMap<ServerAddress, ServerEntry>() // guarded by mutex
    private val cleanups = ArrayList<Job>() // guarded by mutex
    private var opened = false // guarded by mutex
    private val sdamLog = SdamLog(settings.logging)

    /**
     * Test hook: told of every application and establishment error handed to SDAM error handling
     * ([onApplicationError]), stale ones included, on the reporting thread. Null in production
     * (an error then costs one null check).
     */
    @Volatile internal var errorReportProbe: ((ApplicationError) -> Unit)? = null

    /** The initial-topology part of [settings]. */
    internal val topologySettings: TopologySettings = TopologySettings(
        seeds = settings.hosts,
        directConnection = settings.directConnection,
        replicaSetName = settings.replicaSet,
        loadBalanced = settings.loadBalanced,
    )

    /** The current description; conflated (selection waiters re-read the latest). */
    internal val description: StateFlow<TopologyDescription> = state.asStateFlow()

    /**
     * The latest applied description, including steps equal to the previous one by description
     * equality (which the [description] StateFlow does not re-publish), so round-trip times are
     * current for the latency window. Non-blocking read.
     */
    @Volatile
    internal var current: TopologyDescription = TopologyDescription.EMPTY
        private set

    /** True once [close] started (written under the lock). */
    @Volatile
    internal var isClosed: Boolean = false
        private set

    /**
     * Opens the topology: the initial description, the opening events, a pool for a
     * load balancer, monitors for every seed. Idempotent. Does no I/O itself.
     */
    internal suspend fun open() {
        mutex.withLock {
            if (opened || isClosed) return
            opened = true
            applyLocked(TopologyStateMachine.open(topologySettings), null, null)
        }
    }

    /** The pool of [address], or null when the server is not in the topology or has no pool yet. Non-blocking. */
    internal fun pool(address: ServerAddress): ConnectionPool? = if (isClosed) null else poolsSnapshot[address]

    @Volatile
    private var poolsSnapshot: Map<ServerAddress, ConnectionPool> = emptyMap()

    /** Every current pool by server (a snapshot). Non-blocking. */
    internal fun pools(): Map<ServerAddress, ConnectionPool> = poolsSnapshot

    /** Asks every monitor to check its server now (the monitors enforce minHeartbeatFrequencyMS). Non-blocking. */
    internal fun requestImmediateChecks() {
        val monitors = synchronized(monitorsLock) { monitorsSnapshot }
        monitors.forEach { it.requestImmediateCheck() }
    }

    private val monitorsLock = Any()
    private var monitorsSnapshot: List<MonitorHandle> = emptyList()

    /**
     * Applies one monitor outcome for [description]'s server (see [CheckOutcomeSink]). Ignored
     * after close, for a server no longer in the topology, or with a stale topologyVersion.
     */
    internal suspend fun onCheckOutcome(description: ServerDescription, error: Throwable?, clearPool: Boolean, interruptInUseConnections: Boolean) {
        mutex.withLock {
            if (isClosed || !opened) return
            val update = TopologyStateMachine.onServerDescription(state.value, description, topologySettings)
            if (update.ignored) return
            val pre = if (clearPool && !topologySettings.loadBalanced) {
                listOf(TopologyAction.ClearPool(description.address, null, interruptInUseConnections))
            } else {
                emptyList()
            }
            applyLocked(update, pre, error)
        }
    }

    /**
     * SDAM error handling for an error an application operation hit on [address] (with the
     * connection's generation and the reply's topologyVersion, as [error] carries them);
     * stale errors change nothing. [serviceId] is the connection's service in load-balanced mode.
     */
    internal suspend fun onApplicationError(address: ServerAddress, error: Throwable, serviceId: ObjectId? = null) {
        val appError = ApplicationError.fromException(error, address, serviceId) ?: return
        onApplicationError(appError)
    }

    /**
     * As [onApplicationError] for an already classified [error]. The pool's generation (for the
     * stale check) is read under the pool's own lock and never while this topology's lock is
     * held: the lock is taken once to note the server's entry and its clear count, released for
     * the read, and taken again for the step, which treats an error of a known generation as stale
     * when the topology cleared that pool (or replaced the entry) in between.
     */
    internal suspend fun onApplicationError(error: ApplicationError) {
        errorReportProbe?.invoke(error)
        val address = error.address
        val (entry, pool, clearsBefore) = mutex.withLock {
            if (isClosed || !opened) return
            val e = entries[address]
            val p = e?.pool
            Triple(e, p, e?.clearCount(clearKey(p, error)) ?: 0)
        }
        val generation = when {
            pool == null -> 0
            pool.loadBalanced && error.serviceId != null -> pool.serviceGeneration(error.serviceId!!)
            else -> pool.statistics().generation
        }
        mutex.withLock {
            if (isClosed || !opened) return
            if (entries[address] !== entry) return // the server left (and maybe came back) since: the error is of its old pool
            // Cleared since (the error's connection is of an older generation than the pool's now): stale.
            // An error of unknown generation is never stale by generation, so it goes on with the one read.
            val clearedSince = entry != null && pool != null && (entry.pool !== pool || entry.clearCount(clearKey(pool, error)) != clearsBefore)
            if (clearedSince && error.generation != null) return
            val update = ErrorHandling.onApplicationError(state.value, error, generation, topologySettings)
            if (update.ignored && update.actions.isEmpty()) return
            applyLocked(update, null, error.cause)
        }
    }

    /**
     * Applies one SRV rescan's verified [hosts] (polling-srv-records-for-mongos-discovery.md;
     * see `SrvRecordsUpdate`) in the critical section. Ignored after close and when the topology
     * is neither Sharded nor Unknown.
     */
    internal suspend fun onSrvRecords(hosts: List<ServerAddress>, srvMaxHosts: Int, random: Random = Random.Default) {
        mutex.withLock {
            if (isClosed || !opened) return
            val update = SrvRecordsUpdate.apply(state.value, hosts, srvMaxHosts, random)
            if (!update.ignored) applyLocked(update, null, null)
        }
    }

    private suspend fun onEstablishmentError(failure: EstablishmentFailure) {
        val error = ApplicationError.fromException(failure.error, failure.address, failure.serviceId) ?: return
        onApplicationError(error.copy(generation = error.generation ?: failure.generation))
    }

    /**
     * Stops every monitor and pool, publishes the closing events in the spec's order and returns
     * when everything has stopped. Idempotent; completes even when the caller is cancelled.
     */
    internal suspend fun close() {
        withContext(NonCancellable) {
            val toClose = ArrayList<ServerEntry>()
            val pending: List<Job>
            var closing: TopologyUpdate? = null
            mutex.withLock {
                if (isClosed) return@withContext
                isClosed = true
                if (opened) {
                    closing = TopologyStateMachine.close(state.value)
                    toClose += entries.values
                    entries.clear()
                }
                refreshSnapshots()
                pending = cleanups.toList()
            }
            // Monitors first (no more outcomes), then pools; the events follow once they have stopped.
            for (e in toClose) e.monitor?.close()
            for (e in toClose) e.pool?.close()
            pending.joinAll()
            closing?.let {
                current = it.description
                state.value = it.description
                publish(it)
            }
            job.cancel()
            job.join()
        }
    }

    /** Carries out [update] (plus [pre] actions first) under the lock. See the class documentation. */
    private suspend fun applyLocked(update: TopologyUpdate, pre: List<TopologyAction>?, cause: Throwable?) {
        val toStart = ArrayList<MonitorHandle>()
        val checks = ArrayList<ServerAddress>()
        val clears = ArrayList<TopologyAction.ClearPool>()
        for (action in (pre.orEmpty() + update.actions)) {
            val address = action.address
            when (action) {
                is TopologyAction.StartMonitoring -> if (address !in entries) {
                    val monitor = if (topologySettings.loadBalanced) null else monitorFactory.create(address, scope, sinkFor(address))
                    entries[address] = ServerEntry(address, monitor)
                    monitor?.let { toStart += it }
                }
                is TopologyAction.StopMonitoring -> entries.remove(address)?.let { scheduleCleanup(it) }
                is TopologyAction.MarkPoolReady -> {
                    val entry = entries.getOrPut(address) { ServerEntry(address, null) }
                    val pool = entry.pool ?: createPool(address).also { entry.pool = it }
                    pool.ready()
                }
                // Cleared only after the description marking the server Unknown is in place (below).
                is TopologyAction.ClearPool -> clears += action
                is TopologyAction.RequestImmediateCheck -> checks += address
                is TopologyAction.CancelCheck -> entries[address]?.monitor?.cancelCheck()
            }
        }
        refreshSnapshots()
        current = update.description
        state.value = update.description
        publish(update)
        // server-monitoring.md: clear the pool only after the server description is set to
        // Unknown, so an operation interrupted by the clear never sees the server as selectable.
        for (action in clears) clearPool(action, cause)
        toStart.forEach { it.start() }
        for (a in checks) entries[a]?.monitor?.requestImmediateCheck()
    }

    /** Which clears make [error] stale: of its service's connections in load-balanced mode, else of the whole pool. */
    private fun clearKey(pool: ConnectionPool?, error: ApplicationError): ObjectId? = if (pool?.loadBalanced == true) error.serviceId else null

    private suspend fun clearPool(action: TopologyAction.ClearPool, cause: Throwable?) {
        val entry = entries[action.address] ?: return
        val pool = entry.pool ?: return
        val sid = action.serviceId
        if (pool.loadBalanced) {
            if (sid != null) {
                entry.clearing(sid)
                pool.clear(sid)
            }
        } else {
            entry.clearing(null)
            pool.clear(action.interruptInUseConnections, cause)
        }
    }

    private fun publish(update: TopologyUpdate) {
        for (event in update.events(id, System.currentTimeMillis())) {
            sdamLog.logFor(event)
            eventBus.publish(event)
        }
    }

    private fun refreshSnapshots() {
        poolsSnapshot = entries.values.mapNotNull { e -> e.pool?.let { e.address to it } }.toMap()
        synchronized(monitorsLock) { monitorsSnapshot = entries.values.mapNotNull { it.monitor } }
    }

    private fun createPool(address: ServerAddress): ConnectionPool = ConnectionPool(
        address = address,
        settings = settings.pool,
        connectionFactory = connectionFactory,
        eventBus = eventBus,
        loadBalanced = topologySettings.loadBalanced,
        context = scope.coroutineContext,
        logging = settings.logging,
        onEstablishmentError = { onEstablishmentError(it) },
    )

    private fun sinkFor(address: ServerAddress) = CheckOutcomeSink { description, error, clearPool, interrupt ->
        require(description.address == address) { "monitor of $address reported an outcome for ${description.address}" }
        onCheckOutcome(description, error, clearPool, interrupt)
    }

    /** Under the lock: stop [entry]'s monitor and close its pool outside the lock (never join a monitor from its own outcome). */
    private fun scheduleCleanup(entry: ServerEntry) {
        cleanups.removeAll { it.isCompleted }
        cleanups += scope.launch(NonCancellable) {
            entry.monitor?.close()
            entry.pool?.close()
        }
    }
}
