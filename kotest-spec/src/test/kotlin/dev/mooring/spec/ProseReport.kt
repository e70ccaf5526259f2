package dev.mooring.spec

import io.kotest.core.listeners.AfterTestListener
import io.kotest.core.test.TestCase
import io.kotest.engine.test.TestResult

/**
 * Records the outcome of a spec's prose tests in spec-report.json under [suite], for suites that
 * have prose tests only (their README, no JSON files): each test whose name [isProse] accepts is
 * one case of the file `README.md`. Register it with `extension(ProseReport(...))`.
 */
class ProseReport(private val suite: String, private val isProse: (String) -> Boolean) : AfterTestListener {
    override suspend fun afterTest(testCase: TestCase, result: TestResult) {
        val name = testCase.name.name
        if (!isProse(name)) return
        when {
            result.isIgnored -> SpecReport.skipped(suite, README, name, result.reasonOrNull ?: "disabled")
            result.isSuccess -> SpecReport.passed(suite, README, name)
            else -> SpecReport.failed(suite, README, name, result.errorOrNull?.toString() ?: "failed")
        }
    }

    private companion object {
        const val README = "README.md"
    }
}
