package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import java.io.File
import kotlin.time.Duration.Companion.seconds

/**
 * The project's own unified-format scenarios (test resources `unified-scenarios/`): cases the
 * runner and the test kit must handle as the unified test format and the specs say, written
 * for this project (not copies of the official files). Each runs exactly as an official case
 * does ([unifiedCases]); a skipped scenario counts as a failure here, since each is written to run.
 */
class RunnerScenariosUnifiedSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds
    val dir = File(checkNotNull(RunnerScenariosUnifiedSpec::class.java.getResource("/unified-scenarios")) { "no unified-scenarios resources" }.toURI())
    val files = dir.listFiles { f -> f.name.endsWith(".json") }!!.sortedBy { it.name }
    test("the scenarios folder has files") { check(files.isNotEmpty()) }
    for (f in files) {
        for (case in unifiedCases(Json.parseToJsonElement(f.readText()).jsonObject)) {
            test("${f.name}: ${case.name}") {
                check(case.skipReason == null) { "the scenario would be skipped: ${case.skipReason}" }
                case.body()
            }
        }
    }
})
