package dev.mooring.sdam.internal.monitor

import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyId
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument
import org.slf4j.LoggerFactory
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Monitors one server (server-monitoring.md, multi-threaded/asynchronous monitoring), for the
 * live topology (through [dev.mooring.sdam.internal.topology.ServerMonitorFactory]) and sdam's own tests.
 *
 * One supervised coroutine per monitor, on its own dedicated monitoring connection (never the
 * pool's, never authenticated). A new connection's handshake reply satisfies the check. With
 * [ServerMonitoringMode.STREAM][dev.mooring.sdam.ServerMonitoringMode.STREAM] (or AUTO outside a
 * FaaS platform) and a server that reports `topologyVersion`, the monitor switches to the
 * streaming protocol: an awaitable hello (`topologyVersion`, `maxAwaitTimeMS` =
 * heartbeatFrequencyMS) with the OP_MSG exhaustAllowed flag, each streamed reply read with a
 * timeout of connectTimeoutMS + heartbeatFrequencyMS, plus a second coroutine that measures the
 * RTT on a second connection. Otherwise it polls: a hello every heartbeatFrequencyMS.
 *
 * Every check's result goes to [handler] as a [CheckOutcome]: a success carries the
 * [ServerDescription] built from the reply (with this monitor's RTTs); a network or command
 * error closes the connection, resets the RTT and carries an Unknown description with
 * `clearPool = true` and `interruptInUseConnections` = (the error is a network timeout). After
 * a network error on a server whose previous description was known, the next check starts at
 * once (the spec's "retry once"); after any other failure the monitor waits heartbeatFrequencyMS
 * (or until [requestImmediateCheck]). Heartbeat events go to the [EventBus] given, and the
 * SDAM logging spec's heartbeat messages to the `dev.mooring.topology` logger (with
 * [topologyId] when given).
 *
 * Concurrency contract:
 * - [start], [requestImmediateCheck], [cancelCheck] and the RTT properties may be called from any
 *   thread or coroutine; they never block or suspend.
 * - The coroutines are children of a [SupervisorJob] that is itself a child of [parentScope]'s
 *   job: cancelling the parent scope stops the monitor too. Nothing runs before [start].
 * - [handler] is called sequentially from the monitor coroutine; an exception it throws is
 *   logged and never stops the monitor.
 * - [close] is idempotent: it cancels both coroutines, closes both sockets and returns once
 *   they have stopped. Called from inside this monitor's own [handler] (e.g. the topology removes
 *   the server in response to its own reply) it cancels without waiting, since the caller is
 *   the coroutine being stopped. After close, [start] does nothing and no further outcome or
 *   heartbeat event is produced.
 */
internal class ServerMonitor(
    /** The monitored server. */
    internal val address: ServerAddress,
    private val settings: MonitorSettings,
    private val connectionFactory: DefaultConnectionFactory,
    eventBus: EventBus,
    parentScope: CoroutineScope,
    private val handler: CheckOutcomeHandler,
    /** The topology whose id goes into the heartbeat log messages, if any. */
    topologyId: TopologyId? = null,
) {
    private val job: Job = SupervisorJob(parentScope.coroutineContext[Job])
    private val scope = CoroutineScope(
        parentScope.coroutineContext + job + CoroutineName("server-monitor $address") + OwnMonitor(this) +
            CoroutineExceptionHandler { _, t -> log.error("monitor coroutine of {} failed", address, t) },
    )
    private val started = AtomicBoolean(false)
    private val closed = AtomicBoolean(false)
    private val wakeups = Channel<Unit>(Channel.CONFLATED)
    private val connection = AtomicReference<ExhaustConnection?>(null)
    private val rtt = RoundTripTimes()
    private val stableApi = connectionFactory.settings.serverApi != null
    private val rttMonitor = RttMonitor(address, settings, connectionFactory, rtt, stableApi)
    private val reporter = HeartbeatReporter(address, eventBus, topologyId, settings.logging)

    @Volatile private var checking = false

    @Volatile private var cancelledConnection: ExhaustConnection? = null

    // confined to the monitor coroutine
    private var helloOk = stableApi
    private var lastDelivered: ServerDescription = ServerDescription.unknown(address)
    private var lastTopologyVersion: BsonDocument? = null
    private var pending: PendingHeartbeat? = null
    private var lastCheckEndNanos = System.nanoTime()

    /**
     * True when this monitor may use the streaming protocol (mode STREAM, or AUTO without a FaaS
     * platform); it still polls servers that do not report a topologyVersion.
     */
    internal val streamingEnabled: Boolean = StreamingPolicy.streamingEnabled(settings.mode, connectionFactory.clientMetadata)

    /** The EWMA average round-trip time in milliseconds, or null before the first sample (and after a failed check). */
    internal val roundTripTimeMillis: Double? get() = rtt.averageMillis

    /** The minimum round-trip time over the last 10 samples in milliseconds; 0 until two samples were taken. */
    internal val minRoundTripTimeMillis: Double get() = rtt.minimumMillis

    /** True while the streaming protocol's RTT coroutine has been started. */
    internal val rttMonitorStarted: Boolean get() = rttMonitor.started

    /** How many RTT samples the minimum window holds (the handshake's, then the RTT task's); for this module's tests. */
    internal val roundTripSampleCount: Int get() = rtt.sampleCount

    /** Starts monitoring (once). Does nothing after [close]. No I/O on the caller's thread. */
    internal fun start() {
        if (closed.get() || !started.compareAndSet(false, true)) return
        scope.launch { supervise() }
    }

    /**
     * Asks for a check as soon as possible (server-monitoring.md "Requesting an immediate
     * check"): wakes a sleeping monitor, which still keeps minHeartbeatFrequencyMS after the
     * previous check; ignored while a check (including a streaming wait) is in progress.
     */
    internal fun requestImmediateCheck() {
        if (!checking) wakeups.trySend(Unit)
    }

    /**
     * An application connection to this server saw a network error: closes the monitoring
     * connection, so an in-progress check fails at once. That check is not reported to the
     * handler (the topology has already marked the server Unknown); the monitor waits for the
     * next heartbeat or [requestImmediateCheck] and then checks on a new connection.
     */
    internal fun cancelCheck() {
        val c = connection.get() ?: return
        cancelledConnection = c
        c.close()
    }

    /** Stops both coroutines and closes both sockets; see the class documentation. */
    internal suspend fun close() {
        if (closed.compareAndSet(false, true)) {
            job.cancel()
            connection.getAndSet(null)?.close()
            rttMonitor.closeConnection()
            wakeups.close()
        }
        if (currentCoroutineContext()[OwnMonitor]?.monitor === this) return
        job.join()
    }

    override fun toString(): String = "ServerMonitor($address, streamingEnabled=$streamingEnabled, closed=${closed.get()})"

    // ---- the monitor coroutine ---------------------------------------------------------------

    /** Runs the loop; an unexpected exception (a bug) is logged and the loop restarts after a heartbeat. */
    private suspend fun supervise() {
        try {
            while (true) {
                try {
                    loop()
                } catch (e: CancellationException) {
                    throw e
                } catch (t: Throwable) {
                    log.error("monitor of {} failed unexpectedly; restarting it", address, t)
                    connection.getAndSet(null)?.close()
                    delay(settings.heartbeatFrequencyMS)
                }
            }
        } finally {
            connection.getAndSet(null)?.close()
        }
    }

    private suspend fun loop() {
        while (true) {
            val next = check()
            lastCheckEndNanos = System.nanoTime()
            if (next == Next.WAIT) waitForNextCheck()
        }
    }

    private enum class Next { NOW, WAIT }

    private class PendingHeartbeat(val startNanos: Long, val awaited: Boolean, val connectionId: Long?, val serverConnectionId: Long?)

    /** One check (for streaming: one exhaust stream, i.e. every reply until it ends). */
    private suspend fun check(): Next {
        checking = true
        var conn: ExhaustConnection? = null
        try {
            val existing = connection.get()
            if (existing == null || existing.isClosed) {
                conn = connectionFactory.createMonitoringConnection(address)
                connection.set(conn)
                if (closed.get()) conn.close()
                val hb = beginHeartbeat(conn, awaited = false)
                conn.establish()
                val desc = checkNotNull(conn.description) { "monitoring connection to $address has no description after its handshake" }
                val reply = desc.helloReply
                rtt.addNanos(succeeded(hb, reply, desc.serverConnectionId))
                helloOk = stableApi || desc.helloOk
                deliverSuccess(reply)
            } else {
                conn = existing
                val tv = lastTopologyVersion
                if (streamingEnabled && tv != null) {
                    stream(conn, tv)
                } else {
                    val hb = beginHeartbeat(conn, awaited = false)
                    val reply = conn.command(ADMIN, HelloCommands.regular(helloOk), settings.connectTimeoutMS)
                    rtt.addNanos(succeeded(hb, reply, conn.description?.serverConnectionId))
                    // sticky per connection: a server that accepted `hello` keeps accepting it
                    helloOk = helloOk || HelloCommands.helloOk(reply)
                    deliverSuccess(reply)
                }
            }
        } catch (e: CancellationException) {
            if (currentCoroutineContext().isActive) {
                // not this monitor's cancellation: a socket read aborted by close() (cancelCheck)
                // can surface as a CancellationException from the I/O layer; it is a network error
                val network = MongoNetworkException("monitoring connection to $address was closed: ${e.message}", address, conn?.generation, cause = e)
                return onCheckFailed(conn, network)
            }
            pending?.let { reporter.failed(it.connectionId, it.serverConnectionId, it.awaited, it.startNanos, e) }
            pending = null
            conn?.close()
            throw e
        } catch (e: Exception) {
            return onCheckFailed(conn, e)
        } finally {
            checking = false
        }
        val d = lastDelivered
        val serverSupportsStreaming = d.type != ServerType.UNKNOWN && lastTopologyVersion != null
        if (streamingEnabled && serverSupportsStreaming) {
            rttMonitor.start(scope)
            return Next.NOW
        }
        return Next.WAIT
    }

    /** Reads one exhaust stream of awaitable hello replies, delivering each; returns when the server ends the stream. */
    private suspend fun stream(conn: ExhaustConnection, topologyVersion: BsonDocument) {
        var hb = beginHeartbeat(conn, awaited = true)
        val command = HelloCommands.awaitable(helloOk, topologyVersion, settings.heartbeatFrequencyMS)
        conn.exhaust(ADMIN, command, settings.streamingReadTimeoutMS).collect { reply ->
            succeeded(hb, reply, conn.description?.serverConnectionId)
            helloOk = helloOk || HelloCommands.helloOk(reply)
            deliverSuccess(reply, streaming = true)
            // the spec: a started event before attempting to read the next streamed reply
            hb = beginHeartbeat(conn, awaited = true)
        }
        // the server ended the stream (no moreToCome): the started event stays pending for the
        // next awaitable hello, which the caller sends at once
    }

    private suspend fun onCheckFailed(conn: ExhaustConnection?, e: Exception): Next {
        checking = false // the hello call is over: a request from now on is honoured
        pending?.let { reporter.failed(it.connectionId, it.serverConnectionId, it.awaited, it.startNanos, e) }
        pending = null
        conn?.close()
        if (conn != null) connection.compareAndSet(conn, null)
        rtt.reset()
        lastTopologyVersion = null
        if (conn != null && conn === cancelledConnection) {
            // cancelCheck: the topology already marked the server Unknown; report nothing, wait
            lastDelivered = ServerDescription.unknown(address)
            return Next.WAIT
        }
        val previous = lastDelivered
        val description = ServerDescription.unknown(address, error = e.message ?: e.toString(), cause = e)
        deliver(CheckOutcome(description, e, clearPool = true, interruptInUseConnections = e is MongoNetworkTimeoutException))
        return if (e is MongoNetworkException && previous.type != ServerType.UNKNOWN) Next.NOW else Next.WAIT
    }

    private fun beginHeartbeat(conn: ExhaustConnection, awaited: Boolean): PendingHeartbeat {
        pending?.let { return it }
        val serverConnectionId = conn.description?.serverConnectionId
        val start = reporter.started(conn.id, serverConnectionId, awaited)
        return PendingHeartbeat(start, awaited, conn.id, serverConnectionId).also { pending = it }
    }

    /** Publishes the succeeded event of the pending heartbeat; returns its duration in nanoseconds. */
    private fun succeeded(hb: PendingHeartbeat, reply: BsonDocument, serverConnectionId: Long?): Long {
        pending = null
        return reporter.succeeded(hb.connectionId, serverConnectionId ?: hb.serverConnectionId, hb.awaited, hb.startNanos, reply)
    }

    private suspend fun deliverSuccess(reply: BsonDocument, streaming: Boolean = false) {
        val d = ServerDescription.fromHello(address, reply, rtt.averageMillis, rtt.minimumMillis, System.nanoTime() / 1_000_000)
        lastTopologyVersion = if (d.topologyVersion != null) HelloCommands.topologyVersionOf(reply) else null
        deliver(CheckOutcome(d, null, clearPool = false, interruptInUseConnections = false), streaming)
    }

    /**
     * Hands [outcome] to the handler. The hello call is over while the handler runs, so an
     * immediate-check request it makes is honoured; when [streaming] goes on reading afterwards,
     * requests made meanwhile are dropped again (the stream is the check in progress).
     */
    private suspend fun deliver(outcome: CheckOutcome, streaming: Boolean = false) {
        currentCoroutineContext().ensureActive() // nothing reaches the handler once close() has begun
        lastDelivered = outcome.description
        checking = false
        try {
            handler.onCheckOutcome(outcome)
        } catch (e: CancellationException) {
            currentCoroutineContext().ensureActive()
            log.warn("check outcome handler of {} threw a CancellationException while the monitor is active; ignored", address, e)
        } catch (t: Throwable) {
            log.warn("check outcome handler of {} threw; the monitor goes on", address, t)
        }
        if (streaming) {
            checking = true
            wakeups.tryReceive()
        }
    }

    /** Sleeps up to heartbeatFrequencyMS, woken by [requestImmediateCheck], never less than minHeartbeatFrequencyMS after the last check. */
    private suspend fun waitForNextCheck() {
        withTimeoutOrNull(settings.heartbeatFrequencyMS) { wakeups.receiveCatching() }
        val sinceEndMs = (System.nanoTime() - lastCheckEndNanos) / 1_000_000
        if (sinceEndMs < settings.minHeartbeatFrequencyMS) delay(settings.minHeartbeatFrequencyMS - sinceEndMs)
    }

    /** Marks the coroutines of one monitor, so [close] can tell it is called from inside. */
    private class OwnMonitor(val monitor: ServerMonitor) : AbstractCoroutineContextElement(OwnMonitor) {
        companion object Key : CoroutineContext.Key<OwnMonitor>
    }

    private companion object {
        const val ADMIN = "admin"
        val log = LoggerFactory.getLogger(ServerMonitor::class.java)
    }
}
