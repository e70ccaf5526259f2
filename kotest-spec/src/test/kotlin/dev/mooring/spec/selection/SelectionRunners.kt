package dev.mooring.spec.selection

import dev.mooring.sdam.AverageRoundTripTime
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerSelection
import dev.mooring.sdam.ServerSelectionException
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.spec.SpecCase
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.io.File
import kotlin.math.abs
import kotlin.random.Random

/** Runners for the server selection test format (server-selection-tests.md, max-staleness README). */
internal object SelectionRunners {
    /** `server-selection/server_selection` and `max-staleness`: suitable servers and the latency window, or an error. */
    fun selection(file: File, json: JsonElement): List<SpecCase> {
        val doc = json.jsonObject
        return listOf(SpecCase(doc["description"]?.jsonPrimitive?.content ?: file.nameWithoutExtension) { runSelection(doc) })
    }

    private fun runSelection(doc: JsonObject) {
        val heartbeat = doc["heartbeatFrequencyMS"]?.let { SelectionJson.number(it) } ?: ServerSelection.DEFAULT_HEARTBEAT_FREQUENCY_MS
        val expectError = (doc["error"] as? JsonPrimitive)?.booleanOrNull == true
        val outcome = runCatching {
            val topology = SelectionJson.topology(doc.getValue("topology_description").jsonObject)
            val operation = when (doc["operation"]?.jsonPrimitive?.content ?: "read") {
                "read" -> ServerSelectionOperation.Read(SelectionJson.readPreference(doc["read_preference"] as? JsonObject))
                "write" -> ServerSelectionOperation.Write
                else -> error("unknown operation ${doc["operation"]}")
            }
            val deprioritized = SelectionJson.addresses(doc["deprioritized_servers"])
            val suitable = ServerSelection.suitableServers(topology, operation, heartbeat, deprioritized)
            suitable to ServerSelection.latencyWindow(suitable, ServerSelection.DEFAULT_LOCAL_THRESHOLD_MS)
        }
        if (expectError) {
            val e = outcome.exceptionOrNull() ?: throw AssertionError("expected an error, got ${outcome.getOrNull()}")
            if (e !is IllegalArgumentException && e !is ServerSelectionException) throw AssertionError("expected an invalid read preference error, got $e", e)
            return
        }
        val (suitable, window) = outcome.getOrThrow()
        doc["suitable_servers"]?.let { want ->
            val expected = SelectionJson.addresses(want)
            val actual = suitable.map { it.address }.toSet()
            if (expected != actual) throw AssertionError("suitable_servers: expected $expected, got $actual")
        }
        doc["in_latency_window"]?.let { want ->
            val expected = SelectionJson.addresses(want)
            val actual = window.map { it.address }.toSet()
            if (expected != actual) throw AssertionError("in_latency_window: expected $expected, got $actual")
        }
    }

    /** `server-selection/rtt`: one EWMA step. */
    fun rtt(file: File, json: JsonElement): List<SpecCase> {
        val doc = json.jsonObject
        return listOf(
            SpecCase(file.nameWithoutExtension) {
                val old = doc.getValue("avg_rtt_ms").jsonPrimitive
                var avg = AverageRoundTripTime()
                if (old.content != "NULL") avg = forceAverage(old.content.toDouble())
                val next = avg.add(doc.getValue("new_rtt_ms").jsonPrimitive.content.toDouble())
                val expected = doc.getValue("new_avg_rtt").jsonPrimitive.content.toDouble()
                val actual = next.averageMillis ?: throw AssertionError("no average after a sample")
                if (abs(actual - expected) > 1e-9 * maxOf(1.0, abs(expected))) throw AssertionError("new_avg_rtt: expected $expected, got $actual")
            },
        )
    }

    /** An average whose current value is [value]: the first sample becomes the average. */
    private fun forceAverage(value: Double): AverageRoundTripTime = AverageRoundTripTime().add(value)

    /**
     * `server-selection/in_window`: the selection from the latency window repeated `iterations`
     * times with the mocked operation counts; each server's share must be within `tolerance` of
     * the expected frequency. The Random is seeded, so a run is reproducible.
     */
    fun inWindow(file: File, json: JsonElement): List<SpecCase> {
        val doc = json.jsonObject
        return listOf(
            SpecCase(doc["description"]?.jsonPrimitive?.content ?: file.nameWithoutExtension) {
                val topology = SelectionJson.topology(doc.getValue("topology_description").jsonObject)
                val counts = doc.getValue("mocked_topology_state").jsonArray.associate {
                    val o = it.jsonObject
                    SelectionJson.addresses(kotlinx.serialization.json.JsonArray(listOf(o))).single() to o.getValue("operation_count").jsonPrimitive.content.toInt()
                }
                val iterations = doc.getValue("iterations").jsonPrimitive.content.toInt()
                val outcome = doc.getValue("outcome").jsonObject
                val tolerance = outcome.getValue("tolerance").jsonPrimitive.content.toDouble()
                val suitable = ServerSelection.suitableServers(topology, ServerSelectionOperation.Read(ReadPreference.NEAREST))
                val window = ServerSelection.latencyWindow(suitable, ServerSelection.DEFAULT_LOCAL_THRESHOLD_MS)
                val random = Random(file.name.hashCode().toLong())
                val tally = HashMap<String, Int>()
                repeat(iterations) {
                    val s = ServerSelection.chooseInWindow(window, { counts[it] ?: 0 }, random) ?: throw AssertionError("nothing selected")
                    tally.merge(s.address.toString(), 1, Int::plus)
                }
                val problems = ArrayList<String>()
                for ((addr, f) in outcome.getValue("expected_frequencies").jsonObject) {
                    val expected = f.jsonPrimitive.content.toDouble()
                    val actual = (tally[dev.mooring.events.ServerAddress.parse(addr).toString()] ?: 0).toDouble() / iterations
                    if (abs(actual - expected) > tolerance) problems += "$addr: expected frequency $expected ± $tolerance, got $actual"
                }
                if (problems.isNotEmpty()) throw AssertionError(problems.joinToString("; "))
            },
        )
    }
}
