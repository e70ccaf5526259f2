package dev.mooring.spec

import dev.mooring.testkit.SpecTests
import io.kotest.core.spec.style.scopes.FunSpecRootScope
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import java.io.File

/** One test case of a spec-test file, with an optional reason to skip it. */
data class SpecCase(
    val name: String,
    val skipReason: String? = null,
    val body: suspend () -> Unit,
)

/**
 * Registers one kotest test per case of every `*.json` file below [suite] and records each
 * outcome in spec-report.json under [suite]. [cases] turns a parsed file into its cases.
 * A file that cannot be read or parsed counts as one failed case.
 */
fun FunSpecRootScope.specSuite(suite: String, cases: (file: File, json: JsonElement) -> List<SpecCase>) {
    val files = SpecTests.files(suite)
    test("$suite: the corpus folder has test files") {
        check(files.isNotEmpty()) { "no *.json files under ${File(SpecTests.root, suite)}" }
    }
    for (file in files) {
        val rel = SpecTests.relative(suite, file)
        val parsed = try {
            cases(file, Json.parseToJsonElement(file.readText()))
        } catch (e: Exception) {
            listOf(SpecCase("<load>") { throw AssertionError("could not load $rel: $e", e) })
        }
        for (c in parsed) {
            val title = "$suite/$rel: ${c.name}"
            if (c.skipReason != null) {
                SpecReport.skipped(suite, rel, c.name, c.skipReason)
                xtest(title) {}
                continue
            }
            test(title) {
                try {
                    c.body()
                } catch (t: Throwable) {
                    SpecReport.failed(suite, rel, c.name, t.toString())
                    throw t
                }
                SpecReport.passed(suite, rel, c.name)
            }
        }
    }
}
