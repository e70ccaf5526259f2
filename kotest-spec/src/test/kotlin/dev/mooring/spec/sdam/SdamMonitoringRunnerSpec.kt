package dev.mooring.spec.sdam

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import kotlinx.serialization.json.Json
import java.io.File

/**
 * The SDAM JSON runner's `monitoring` outcomes (server-discovery-and-monitoring-tests.md format)
 * on phases written here: a secondary naming an unchecked server as primary produces one
 * ServerDescriptionChanged (for the secondary) and a topology change that shows the other server
 * as PossiblePrimary; an expectation of an event for the PossiblePrimary server fails the phase.
 */
class SdamMonitoringRunnerSpec : FunSpec({
    val secondaryNamingB = """["a:27017", {"ok": 1, "helloOk": true, "isWritablePrimary": false, "secondary": true, "setName": "rs",
        "primary": "b:27017", "hosts": ["a:27017", "b:27017"], "minWireVersion": 0, "maxWireVersion": 21}]"""
    val unknown = """{"address": "%s", "arbiters": [], "hosts": [], "passives": [], "type": "%s"}"""
    val secondaryDescription = """{"address": "a:27017", "arbiters": [], "hosts": ["a:27017", "b:27017"], "passives": [],
        "primary": "b:27017", "setName": "rs", "type": "RSSecondary"}"""
    val opening = """
        {"topology_opening_event": {"topologyId": "42"}},
        {"topology_description_changed_event": {"topologyId": "42", "previousDescription": {"topologyType": "Unknown", "servers": []},
          "newDescription": {"topologyType": "Unknown", "servers": [${unknown.format("a:27017", "Unknown")}, ${unknown.format("b:27017", "Unknown")}]}}},
        {"server_opening_event": {"topologyId": "42", "address": "a:27017"}},
        {"server_opening_event": {"topologyId": "42", "address": "b:27017"}}"""
    val secondaryChanged = """{"server_description_changed_event": {"topologyId": "42", "address": "a:27017",
          "previousDescription": ${unknown.format("a:27017", "Unknown")}, "newDescription": $secondaryDescription}}"""
    val topologyChanged = """{"topology_description_changed_event": {"topologyId": "42",
          "previousDescription": {"topologyType": "Unknown", "servers": [${unknown.format("a:27017", "Unknown")}, ${unknown.format("b:27017", "Unknown")}]},
          "newDescription": {"topologyType": "ReplicaSetNoPrimary", "setName": "rs",
            "servers": [$secondaryDescription, ${unknown.format("b:27017", "PossiblePrimary")}]}}}"""

    suspend fun run(events: String) {
        val doc = """{"description": "written for this spec", "uri": "mongodb://a,b",
            "phases": [{"responses": [$secondaryNamingB], "outcome": {"events": [$events]}}]}"""
        SdamJsonRunner.cases(File("inline.json"), Json.parseToJsonElement(doc)).forEach { it.body() }
    }

    test("a secondary naming an unchecked primary: one server event (its own), the other server PossiblePrimary in the topology change") {
        run("$opening, $secondaryChanged, $topologyChanged")
    }

    test("the runner fails a phase that expects a server event for the PossiblePrimary server") {
        val forB = """{"server_description_changed_event": {"topologyId": "42", "address": "b:27017",
          "previousDescription": ${unknown.format("b:27017", "Unknown")}, "newDescription": ${unknown.format("b:27017", "PossiblePrimary")}}}"""
        shouldThrow<AssertionError> { run("$opening, $secondaryChanged, $forB, $topologyChanged") }.message!! shouldContain "events"
    }

    test("the runner fails a phase whose topology change expects b Unknown instead of PossiblePrimary") {
        val wrong = topologyChanged.replace("PossiblePrimary", "Unknown")
        shouldThrow<AssertionError> { run("$opening, $secondaryChanged, $wrong") }.message!! shouldContain "b:27017"
    }
})
