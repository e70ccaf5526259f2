package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import io.kotest.engine.concurrency.TestExecutionMode
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlin.time.Duration.Companion.seconds

/**
 * Mooring's own unified-format scenarios (test resources under `dev/mooring/spec/unified/scenarios`,
 * written for this project, not taken from the official suites), run by the same [UnifiedTestRun]
 * as the official suites. Each file names one deployment in its first runOnRequirements entry
 * (its first topology, with authentication when `auth: true`); a test whose own
 * runOnRequirements ask for `minServerVersion: 8.0` runs on servers of wire version 25.
 */
class MooringScenariosUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    testExecutionMode = TestExecutionMode.LimitedConcurrency(4)
    for (name in SCENARIOS) {
        val file = Json.parseToJsonElement(resource(name)).jsonObject
        val requirement = file["runOnRequirements"]!!.jsonArray.first().jsonObject
        val topology = requirement["topologies"]!!.jsonArray.first().jsonPrimitive.content
        val auth = requirement["auth"]?.jsonPrimitive?.booleanOrNull ?: false
        for (t in file["tests"]!!.jsonArray) {
            val test = t.jsonObject
            test("$name: ${test["description"]!!.jsonPrimitive.content}") {
                UnifiedHost.start(topology, auth, maxWireVersion = wireVersion(test)).use { host -> UnifiedTestRun(host, file).run(test) }
            }
        }
    }
})

private val SCENARIOS = listOf("handshake-error-retries.json", "cursor-timeouts.json")

private fun resource(name: String): String =
    requireNotNull(MooringScenariosUnifiedSpec::class.java.getResource("scenarios/$name")) { "no scenario $name" }.readText()

private fun wireVersion(test: JsonObject): Int {
    val min = test["runOnRequirements"]?.jsonArray?.firstNotNullOfOrNull { it.jsonObject["minServerVersion"]?.jsonPrimitive?.content }
    return if (min == "8.0") 25 else 21
}
