package dev.mooring.spec.sdam

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.ApplicationErrorKind
import dev.mooring.sdam.ErrorHandling
import dev.mooring.sdam.PoolGenerations
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologySettings
import dev.mooring.sdam.TopologyStateMachine
import dev.mooring.sdam.TopologyUpdate
import dev.mooring.spec.SpecCase
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonDocument
import java.io.File

/**
 * Runs one file of the SDAM JSON format (server-discovery-and-monitoring-tests.md): the URI
 * gives the initial topology; each phase applies its hello responses through
 * [TopologyStateMachine.onServerDescription] and its application errors through
 * [ErrorHandling.onApplicationError], carries the returned actions out on a pure
 * [PoolGenerations] model, and compares the outcome field by field (or the events).
 */
internal object SdamJsonRunner {
    fun cases(file: File, json: JsonElement): List<SpecCase> {
        val doc = json.jsonObject
        val name = doc["description"]?.jsonPrimitive?.content ?: file.nameWithoutExtension
        return listOf(SpecCase(name) { run(doc) })
    }

    private class State(val settings: TopologySettings) {
        val topologyId = TopologyId("42")
        var description: TopologyDescription = TopologyDescription.EMPTY
        var pools = PoolGenerations()
        val events = ArrayList<MooringEvent>()
        private var clock = 0L

        fun apply(update: TopologyUpdate) {
            description = update.description
            pools = pools.apply(update.actions)
            events += update.events(topologyId, ++clock)
        }
    }

    private fun run(doc: JsonObject) {
        val uri = SdamTestUri.parse(doc.getValue("uri").jsonPrimitive.content)
        val state = State(uri.settings)
        state.apply(TopologyStateMachine.open(uri.settings))
        doc.getValue("phases").jsonArray.forEachIndexed { i, p ->
            val phase = p.jsonObject
            val label = "phase ${i + 1}${phase["description"]?.let { ": " + it.jsonPrimitive.content } ?: ""}"
            phase["responses"]?.jsonArray?.forEach { r -> applyResponse(state, r.jsonArray) }
            phase["applicationErrors"]?.jsonArray?.forEach { e -> applyError(state, e.jsonObject) }
            val outcome = phase.getValue("outcome").jsonObject
            OutcomeMatcher.check(label, outcome, state.description, state.pools, state.events)
            state.events.clear()
        }
    }

    private fun applyResponse(state: State, r: JsonArray) {
        val address = ServerAddress.parse(r[0].jsonPrimitive.content)
        val reply = BsonDocument.parse(r[1].toString())
        val sd = if (reply.isEmpty()) {
            ServerDescription.unknown(address, "network error during the check of $address (empty response in the test)")
        } else {
            ServerDescription.fromHello(address, reply)
        }
        state.apply(TopologyStateMachine.onServerDescription(state.description, sd, state.settings))
    }

    private fun applyError(state: State, e: JsonObject) {
        val address = ServerAddress.parse(e.getValue("address").jsonPrimitive.content)
        val poolGeneration = state.pools.generation(address)
        val generation = e["generation"]?.takeUnless { it is JsonNull }?.jsonPrimitive?.content?.toInt() ?: poolGeneration
        val handshakeCompleted = when (val w = e.getValue("when").jsonPrimitive.content) {
            "beforeHandshakeCompletes" -> false
            "afterHandshakeCompletes" -> true
            else -> error("unknown 'when': $w")
        }
        val error: ApplicationError? = when (val type = e.getValue("type").jsonPrimitive.content) {
            "command" -> ApplicationError.fromCommandResponse(
                address, BsonDocument.parse(e.getValue("response").toString()), generation, handshakeCompleted,
            )
            "network", "timeout" -> ApplicationError(
                address,
                if (type == "network") ApplicationErrorKind.NETWORK else ApplicationErrorKind.NETWORK_TIMEOUT,
                message = "simulated $type error",
                generation = generation,
                handshakeCompleted = handshakeCompleted,
                // The pool labels network errors during connection establishment and hello
                // (CMAP "backpressure-enabled"); the tests' "beforeHandshakeCompletes" is that phase.
                errorLabels = if (handshakeCompleted) emptySet() else setOf(ApplicationError.SYSTEM_OVERLOADED_ERROR_LABEL, "RetryableError"),
            )
            else -> error("unknown application error type: $type")
        }
        if (error != null) state.apply(ErrorHandling.onApplicationError(state.description, error, poolGeneration, state.settings))
    }
}
