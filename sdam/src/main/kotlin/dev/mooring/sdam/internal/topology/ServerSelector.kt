package dev.mooring.sdam.internal.topology

import dev.mooring.sdam.MongoClusterSettings.Companion.MIN_HEARTBEAT_FREQUENCY_MS
import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.events.ServerAddress
import dev.mooring.events.StructuredLog
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerSelection
import dev.mooring.sdam.ServerSelectionException
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.TopologyDescription
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Function
import kotlin.random.Random

/**
 * Internal API, not stable: the multi-threaded server selection loop of server-selection.md
 * over a live [Topology]. Each attempt validates the latest description (compatibility, max
 * staleness), finds the suitable servers (deprioritized ones only as a last resort), keeps
 * those in the latency window and picks one of two random candidates by lower in-flight
 * operation count. While nothing suitable is found it asks the monitors for immediate checks
 * (at most every [MIN_HEARTBEAT_FREQUENCY_MS]) and waits for the description to change, until
 * the timeout. Log messages: "Server selection started/succeeded/failed" and, once per
 * operation, "Waiting for suitable server to become available".
 *
 * Thread-safe; any number of selections may run concurrently. Cancelling [select] leaves no
 * operation count behind. After the topology closes, selections fail with
 * [MongoClusterClosedException].
 */
internal class ServerSelector(
    private val topology: Topology,
    private val random: Random = Random.Default,
) {
    private val counts = ConcurrentHashMap<ServerAddress, AtomicInteger>()
    private val log = StructuredLog("serverSelection", topology.settings.logging)

    /** [operationCount] as the function [ServerSelection.select] takes (one object, not one per selection). */
    private val countOf: (ServerAddress) -> Int = ::operationCount

    /** The number of operations currently running on [address] (selected and not yet released). */
    internal fun operationCount(address: ServerAddress): Int = counts[address]?.get() ?: 0

    /**
     * Selects a server for [operation] within [timeoutMS] ms. [operationName] (the command
     * name) and [selector] appear in the log messages. When [operationTimeout] is true the
     * limit came from timeoutMS and running out raises [MongoOperationTimeoutException];
     * otherwise [MongoServerSelectionTimeoutException]. Raises [ServerSelectionException], [MongoIncompatibleServerException]
     * subtypes at once for an incompatible topology or an invalid read preference. When
     * [closing] is given and completes before a server is selected (checked before each
     * attempt and while waiting), raises [MongoClusterClosedException].
     *
     * When a suitable server is known at once this does not suspend (and allocates no frame):
     * only [selectWaiting] does.
     */
    internal suspend fun select(
        operation: ServerSelectionOperation,
        operationName: String,
        timeoutMS: Long,
        deprioritized: Set<ServerAddress> = emptySet(),
        operationTimeout: Boolean = false,
        closing: Job? = null,
    ): SelectedServer {
        val start = System.nanoTime()
        logSelection("Server selection started", operationName, operation, topology.description.value)
        return attempt(operation, operationName, deprioritized, closing)
            ?: selectWaiting(operation, operationName, timeoutMS, deprioritized, operationTimeout, closing, start)
    }

    /**
     * One selection attempt on the latest description: the selected server, or null when none is
     * suitable (or its pool is gone). Raises the closed/closing, [ServerSelectionException] and [MongoIncompatibleServerException] errors.
     */
    private fun attempt(operation: ServerSelectionOperation, operationName: String, deprioritized: Set<ServerAddress>, closing: Job?): SelectedServer? {
        if (topology.isClosed) throw failed(MongoClusterClosedException("the cluster is closed"), operationName, operation, topology.description.value)
        if (closing != null && closing.isCompleted) {
            throw failed(MongoClusterClosedException("the cluster is closing"), operationName, operation, topology.description.value)
        }
        val settings = topology.settings
        val seen = topology.current
        val chosen = try {
            ServerSelection.select(seen, operation, settings.localThresholdMS, settings.heartbeatFrequencyMS, deprioritized, countOf, random)
        } catch (e: ServerSelectionException) {
            throw failed(e, operationName, operation, seen)
        } catch (e: MongoIncompatibleServerException) {
            throw failed(e, operationName, operation, seen)
        } ?: return null
        val pool = topology.pool(chosen.address) ?: return null
        val counter = counts[chosen.address] ?: counts.computeIfAbsent(chosen.address, NEW_COUNTER)
        counter.incrementAndGet()
        val selected = SelectedServer(chosen, seen, pool, counter)
        log.debug("Server selection succeeded") {
            common(operationName, operation, seen)
            serverFields(chosen.address)
        }
        return selected
    }

    /** The waiting part of [select]: attempts again each time the description changes, until [timeoutMS] after [start]. */
    private suspend fun selectWaiting(
        operation: ServerSelectionOperation,
        operationName: String,
        timeoutMS: Long,
        deprioritized: Set<ServerAddress>,
        operationTimeout: Boolean,
        closing: Job?,
        start: Long,
    ): SelectedServer {
        val deadline = start + timeoutMS * 1_000_000
        var waitingLogged = false
        var lastCheckRequest = Long.MIN_VALUE
        while (true) {
            val published = topology.description.value
            val seen = topology.current
            attempt(operation, operationName, deprioritized, closing)?.let { return it }
            val now = System.nanoTime()
            val remainingNanos = deadline - now
            if (remainingNanos <= 0) {
                val waited = (now - start) / 1_000_000
                val message = MongoServerSelectionTimeoutException.describe(describe(operation), waited, seen)
                val error = if (operationTimeout) {
                    MongoOperationTimeoutException("timeoutMS expired during server selection: $message")
                } else {
                    MongoServerSelectionTimeoutException(message, seen, waited)
                }
                throw failed(error, operationName, operation, seen)
            }
            if (lastCheckRequest == Long.MIN_VALUE || now - lastCheckRequest >= MIN_HEARTBEAT_FREQUENCY_MS * 1_000_000) {
                topology.requestImmediateChecks()
                lastCheckRequest = now
            }
            if (!waitingLogged) {
                waitingLogged = true
                log.info("Waiting for suitable server to become available") {
                    common(operationName, operation, seen)
                    put("remainingTimeMS", remainingNanos / 1_000_000)
                }
            }
            val waitMillis = minOf(remainingNanos / 1_000_000 + 1, MIN_HEARTBEAT_FREQUENCY_MS)
            withTimeoutOrNull(waitMillis) { awaitChange(published, closing) }
        }
    }

    /** Suspends until the published description is no longer [published], or [closing] completes. */
    private suspend fun awaitChange(published: TopologyDescription, closing: Job?) {
        if (closing == null) {
            topology.description.first { it !== published }
            return
        }
        coroutineScope {
            val changed = async { topology.description.first { it !== published } }
            select<Unit> {
                changed.onAwait { }
                closing.onJoin { changed.cancel() }
            }
        }
    }

    /** The selector's text for logs and errors (built only when one of them needs it). */
    private fun describe(operation: ServerSelectionOperation): String = when (operation) {
        is ServerSelectionOperation.Write -> "writable server"
        is ServerSelectionOperation.Read -> operation.readPreference.toString()
        is ServerSelectionOperation.Pinned -> "pinned mongos ${operation.address}"
    }

    private fun failed(error: Exception, operationName: String, selector: ServerSelectionOperation, seen: TopologyDescription): Exception {
        log.debug("Server selection failed") {
            common(operationName, selector, seen)
            put("failure", error.message ?: error.toString())
        }
        return error
    }

    private fun MutableMap<String, Any?>.common(operationName: String, selector: ServerSelectionOperation, seen: TopologyDescription) {
        put("topologyId", topology.id.value)
        put("selector", describe(selector))
        put("operation", operationName)
        put("topologyDescription", seen.toString())
    }

    private fun logSelection(message: String, operationName: String, selector: ServerSelectionOperation, seen: TopologyDescription) =
        log.debug(message) { common(operationName, selector, seen) }

    private companion object {
        /** Creates a server's operation counter: one object (a lambda here would be wrapped anew on every selection). */
        val NEW_COUNTER = Function<ServerAddress, AtomicInteger> { AtomicInteger() }
    }
}
