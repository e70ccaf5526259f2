package dev.mooring.sdam.internal.monitor

import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import org.slf4j.LoggerFactory
import java.util.concurrent.atomic.AtomicReference

/**
 * The streaming protocol's RTT task (server-monitoring.md "Measuring RTT", "RTT thread"): on its
 * own monitoring connection it runs a regular hello every heartbeatFrequencyMS and adds the
 * duration (the handshake's, for a new connection) to [rtt]. It publishes no events and never
 * touches the topology; on an error it closes its connection and opens a new one next time,
 * without resetting [rtt] (the monitor coroutine owns resets).
 *
 * Started at most once, as a child coroutine of the monitor's scope; cancelling that scope
 * stops it. [closeConnection] closes its socket (non-blocking, any thread).
 */
internal class RttMonitor(
    private val address: ServerAddress,
    private val settings: MonitorSettings,
    private val factory: DefaultConnectionFactory,
    private val rtt: RoundTripTimes,
    private val initialHelloOk: Boolean,
) {
    private val connection = AtomicReference<ExhaustConnection?>(null)

    @Volatile private var job: Job? = null

    /** True once [start] launched the coroutine. */
    val started: Boolean get() = job != null

    /** Launches the RTT coroutine in [scope] (once; later calls do nothing). Called only from the monitor coroutine. */
    fun start(scope: CoroutineScope) {
        if (job != null) return
        job = scope.launch(CoroutineName("rtt-monitor $address")) { run() }
    }

    /** Closes the current RTT connection, if any. */
    fun closeConnection() {
        connection.getAndSet(null)?.close()
    }

    private suspend fun run() {
        var helloOk = initialHelloOk
        try {
            while (true) {
                try {
                    helloOk = ping(helloOk)
                } catch (e: CancellationException) {
                    throw e
                } catch (e: Exception) {
                    log.debug("RTT check of {} failed; reconnecting on the next one: {}", address, e.toString())
                    closeConnection()
                    helloOk = initialHelloOk
                }
                delay(settings.heartbeatFrequencyMS)
            }
        } finally {
            closeConnection()
        }
    }

    /** One RTT sample; returns the helloOk state for the next one. */
    private suspend fun ping(helloOk: Boolean): Boolean {
        val current = connection.get()
        if (current == null || current.isClosed) {
            val c = factory.createMonitoringConnection(address)
            connection.set(c)
            val start = System.nanoTime()
            c.establish()
            rtt.addNanos(System.nanoTime() - start)
            return initialHelloOk || c.description?.helloOk == true
        }
        val start = System.nanoTime()
        val reply = current.command("admin", HelloCommands.regular(helloOk), settings.connectTimeoutMS)
        rtt.addNanos(System.nanoTime() - start)
        return initialHelloOk || HelloCommands.helloOk(reply)
    }

    private companion object {
        val log = LoggerFactory.getLogger(RttMonitor::class.java)
    }
}
