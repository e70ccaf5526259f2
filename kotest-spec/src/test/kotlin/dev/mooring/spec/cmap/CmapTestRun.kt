package dev.mooring.spec.cmap

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.PoolErrorLabels
import dev.mooring.events.EventBus
import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import java.util.concurrent.ConcurrentHashMap

/**
 * Runs one cmap-format test (unit or integration style) against a fresh pool built on
 * [factory], following cmap-format-README.md: threads are coroutines fed by a channel, events
 * are captured by a synchronous listener, and an establishment error no checkout received is
 * handled like SDAM does (clear the pool unless the error carries the backpressure label).
 */
class CmapTestRun(
    private val test: JsonObject,
    private val factory: ConnectionFactory,
    private val address: ServerAddress,
) {
    private val events = java.util.Collections.synchronizedList(ArrayList<ConnectionPoolEvent>())
    private val labels = ConcurrentHashMap<String, Connection>()
    private val threads = HashMap<String, TestThread>()
    private val threadScope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private lateinit var pool: ConnectionPool

    private inner class TestThread(val name: String) {
        val ops = Channel<JsonObject>(Channel.UNLIMITED)
        @Volatile var error: Throwable? = null
        val job: Job = threadScope.launch {
            for (op in ops) {
                if (error != null) continue
                try {
                    execute(op)
                } catch (e: CancellationException) {
                    throw e
                } catch (t: Throwable) {
                    error = t
                }
            }
        }
    }

    suspend fun run() {
        val bus = EventBus()
        bus.addListener { e -> if (e is ConnectionPoolEvent) events.add(e) }
        pool = ConnectionPool(address, poolSettings(), factory, bus, onEstablishmentError = { f ->
            val err = f.error
            if (!(err is MooringException && err.hasErrorLabel(PoolErrorLabels.SYSTEM_OVERLOADED_ERROR))) {
                pool.clear(cause = err)
            }
        })
        var mainError: Throwable? = null
        val snapshot: List<ConnectionPoolEvent>
        try {
            for (el in test["operations"]?.jsonArray ?: JsonArray(emptyList())) {
                val op = el.jsonObject
                val thread = op["thread"]?.jsonPrimitive?.content
                if (thread != null) {
                    val t = threads[thread] ?: error("operation on thread '$thread' that was never started")
                    t.ops.send(op)
                } else {
                    execute(op)
                }
            }
        } catch (e: CancellationException) {
            throw e
        } catch (t: Throwable) {
            mainError = t
        } finally {
            snapshot = synchronized(events) { events.toList() }
            withContext(NonCancellable) {
                threadScope.coroutineContext[Job]!!.cancelAndJoin()
                pool.close()
            }
        }
        verify(mainError, snapshot)
    }

    private fun verify(mainError: Throwable?, actualAll: List<ConnectionPoolEvent>) {
        val expectedError = test["error"]?.jsonObject
        if (expectedError != null) {
            if (mainError == null) throw AssertionError("expected error $expectedError, but none was thrown")
            match(expectedError, errorToJson(mainError))?.let { throw AssertionError("error mismatch: $it (actual: $mainError)", mainError) }
        } else if (mainError != null) {
            throw AssertionError("unexpected error: $mainError", mainError)
        }
        val ignore = test["ignore"]?.jsonArray?.map { it.jsonPrimitive.content }?.toSet() ?: emptySet()
        val actual = actualAll.filter { specTypeName(it) !in ignore }.map(::eventToJson)
        val expected = test["events"]?.jsonArray ?: JsonArray(emptyList())
        for ((i, e) in expected.withIndex()) {
            val a = actual.getOrNull(i)
                ?: throw AssertionError("expected event #$i $e, but only ${actual.size} events: ${actual.joinToString("\n  ", "\n  ")}")
            match(e, a, "events[$i]")?.let {
                throw AssertionError("$it\nactual events:${actual.joinToString("\n  ", "\n  ")}")
            }
        }
    }

    private fun poolSettings(): ConnectionPoolSettings {
        val o = test["poolOptions"]?.jsonObject ?: return ConnectionPoolSettings()
        var s = ConnectionPoolSettings()
        for ((k, v) in o) {
            val p = v.jsonPrimitive
            s = when (k) {
                "maxPoolSize" -> s.copy(maxPoolSize = p.long.toInt())
                "minPoolSize" -> s.copy(minPoolSize = p.long.toInt())
                "maxIdleTimeMS" -> s.copy(maxIdleTimeMS = p.long)
                "maxConnecting" -> s.copy(maxConnecting = p.long.toInt())
                "waitQueueTimeoutMS" -> s.copy(waitQueueTimeoutMS = p.long)
                "backgroundThreadIntervalMS" -> s.copy(maintenanceIntervalMS = p.long)
                "appName" -> s // a connection setting: the integration factory applies it
                else -> throw IllegalArgumentException("unsupported poolOptions key '$k'")
            }
        }
        return s
    }

    private suspend fun execute(op: JsonObject) {
        when (val name = op["name"]!!.jsonPrimitive.content) {
            "start" -> {
                val target = op["target"]!!.jsonPrimitive.content
                threads[target] = TestThread(target)
            }
            "wait" -> delay(op["ms"]!!.jsonPrimitive.long)
            "waitForThread" -> {
                val target = op["target"]!!.jsonPrimitive.content
                val t = threads[target] ?: error("waitForThread on unknown thread '$target'")
                t.ops.close()
                t.job.join()
                t.error?.let { throw it }
            }
            "waitForEvent" -> {
                val type = op["event"]!!.jsonPrimitive.content
                val count = op["count"]!!.jsonPrimitive.long.toInt()
                val timeout = op["timeout"]?.jsonPrimitive?.long ?: 10_000L
                val deadline = System.nanoTime() + timeout * 1_000_000
                while (synchronized(events) { events.count { specTypeName(it) == type } } < count) {
                    if (System.nanoTime() > deadline) {
                        throw AssertionError("timed out after $timeout ms waiting for $count $type events; saw ${synchronized(events) { events.map(::specTypeName) }}")
                    }
                    delay(2)
                }
            }
            "checkOut" -> {
                val c = pool.checkOut()
                op["label"]?.jsonPrimitive?.content?.let { labels[it] = c }
            }
            "checkIn" -> {
                val label = op["connection"]!!.jsonPrimitive.content
                pool.checkIn(labels[label] ?: error("no connection labelled '$label'"))
            }
            "clear" -> pool.clear(interruptInUseConnections = op["interruptInUseConnections"]?.jsonPrimitive?.boolean ?: false)
            "close" -> pool.close()
            "ready" -> pool.ready()
            else -> throw IllegalArgumentException("unknown cmap-format operation '$name'")
        }
    }
}

