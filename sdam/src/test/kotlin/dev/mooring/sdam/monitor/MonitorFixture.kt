package dev.mooring.sdam.monitor

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.events.EventBus
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.internal.monitor.CheckOutcome
import dev.mooring.sdam.internal.monitor.CheckOutcomeHandler
import dev.mooring.sdam.internal.monitor.MonitorSettings
import dev.mooring.sdam.internal.monitor.ServerMonitor
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.filterNotNull
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.withTimeout
import java.util.concurrent.CopyOnWriteArrayList

/** Records every outcome in order; [onOutcome] runs after recording (e.g. to throw). Thread-safe. */
internal class RecordingHandler(private val onOutcome: suspend (CheckOutcome) -> Unit = {}) : CheckOutcomeHandler {
    private val state = MutableStateFlow<List<CheckOutcome>>(emptyList())

    val outcomes: List<CheckOutcome> get() = state.value
    val count: Int get() = state.value.size

    private val times = java.util.IdentityHashMap<CheckOutcome, Long>()

    /** When [outcome] reached this handler, in [System.nanoTime] units. */
    fun receivedAtNanos(outcome: CheckOutcome): Long = synchronized(times) { times.getValue(outcome) }

    override suspend fun onCheckOutcome(outcome: CheckOutcome) {
        synchronized(times) { times[outcome] = System.nanoTime() }
        state.update { it + outcome }
        onOutcome(outcome)
    }

    /** The first outcome at index >= [from] matching [predicate], waiting up to [timeoutMs]. */
    suspend fun await(from: Int = 0, timeoutMs: Long = 20_000, predicate: (CheckOutcome) -> Boolean = { true }): CheckOutcome =
        withTimeout(timeoutMs) { state.map { l -> l.drop(from).firstOrNull(predicate) }.filterNotNull().first() }

    /** Waits until at least [n] outcomes were recorded. */
    suspend fun awaitCount(n: Int, timeoutMs: Long = 20_000) {
        withTimeout(timeoutMs) { state.first { it.size >= n } }
    }
}

/** One monitor under test with its own parent scope, factory, bus and recorder. */
internal class MonitorFixture(
    val address: ServerAddress,
    heartbeatFrequencyMS: Long,
    mode: ServerMonitoringMode,
    connectTimeoutMS: Long = 5_000,
    connectionSettings: ConnectionSettings = ConnectionSettings(connectTimeoutMS = connectTimeoutMS, appName = "monitor-spec"),
    onOutcome: suspend (CheckOutcome) -> Unit = {},
    minHeartbeatFrequencyMS: Long = dev.mooring.sdam.MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS,
) : AutoCloseable {
    val parentJob: Job = SupervisorJob()
    val parentScope = CoroutineScope(parentJob + Dispatchers.Default)
    val factory = DefaultConnectionFactory(connectionSettings)
    val bus = EventBus()
    val events: MutableList<MooringEvent> = CopyOnWriteArrayList()
    private val subscription = bus.addListener { events.add(it) }
    val handler = RecordingHandler(onOutcome)
    val monitor = ServerMonitor(
        address,
        MonitorSettings(heartbeatFrequencyMS, minHeartbeatFrequencyMS, connectTimeoutMS, mode),
        factory,
        bus,
        parentScope,
        handler,
    )

    val heartbeats: List<MooringEvent>
        get() = events.filter { it is ServerHeartbeatStartedEvent || it is ServerHeartbeatSucceededEvent || it is ServerHeartbeatFailedEvent }

    fun start(): MonitorFixture = also { monitor.start() }

    /** Closes the monitor, then checks nothing of it is left in the parent job. */
    suspend fun closeMonitor() {
        monitor.close()
    }

    override fun close() {
        subscription.close()
        factory.close()
        parentJob.cancel()
    }

    suspend fun shutdown() {
        monitor.close()
        subscription.close()
        factory.close()
        parentJob.cancelAndJoin()
    }
}

/** Polls [condition] every 20 ms for up to [timeoutMs]; throws with [what] when it never holds. */
suspend fun eventually(what: String, timeoutMs: Long = 10_000, condition: () -> Boolean) {
    val deadline = System.nanoTime() + timeoutMs * 1_000_000
    while (!condition()) {
        if (System.nanoTime() > deadline) throw AssertionError("timed out after $timeoutMs ms waiting for: $what")
        delay(20)
    }
}

/** Every started heartbeat event is followed by exactly one succeeded or failed event with the same awaited flag. */
fun heartbeatsArePaired(heartbeats: List<MooringEvent>, allowTrailingStart: Boolean): Boolean {
    var open: ServerHeartbeatStartedEvent? = null
    for (e in heartbeats) {
        when (e) {
            is ServerHeartbeatStartedEvent -> { if (open != null) return false; open = e }
            is ServerHeartbeatSucceededEvent -> { if (open == null || open.awaited != e.awaited) return false; open = null }
            is ServerHeartbeatFailedEvent -> { if (open == null || open.awaited != e.awaited) return false; open = null }
        }
    }
    return open == null || allowTrailingStart
}
