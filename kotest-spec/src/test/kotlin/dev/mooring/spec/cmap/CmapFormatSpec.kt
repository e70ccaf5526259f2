package dev.mooring.spec.cmap

import dev.mooring.events.ServerAddress
import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import io.kotest.core.spec.style.FunSpec
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * The cmap-format spec runner: every `*.json` under spec-tests/cmap-format. Unit-style tests
 * run against a pool over [MockConnectionFactory]; integration-style tests (with a failPoint)
 * run against the test kit's wire-protocol server.
 */
class CmapFormatSpec : FunSpec({
    specSuite("cmap-format") { file, json ->
        val o = json.jsonObject
        val name = o["description"]?.jsonPrimitive?.content ?: file.nameWithoutExtension
        when (val style = o["style"]?.jsonPrimitive?.content) {
            "unit" -> listOf(
                SpecCase(name) {
                    withTimeout(60_000) { CmapTestRun(o, MockConnectionFactory(), ServerAddress("localhost", 27017)).run() }
                },
            )
            "integration" -> listOf(SpecCase(name, skipReason = "integration test kit not yet merged") {})
            else -> listOf(SpecCase(name) { throw AssertionError("unknown cmap-format style '$style'") })
        }
    }
})
