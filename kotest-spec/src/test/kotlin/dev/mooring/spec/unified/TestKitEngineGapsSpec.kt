package dev.mooring.spec.unified

import dev.mooring.testkit.SpecTests
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.io.File

/**
 * The test kit's skip list ([TestKitEngineGaps]) is one list of named cases: each names the server
 * feature it needs, none is listed twice, each is a test of the visible corpus (a stale entry
 * would hide nothing but mislead), and the list decides alone (no pattern skips a case it does not name).
 */
class TestKitEngineGapsSpec : FunSpec({
    test("every listed case names the server feature it needs, and is listed once") {
        TestKitEngineGaps.cases.size shouldBe TestKitEngineGaps.entries
        TestKitEngineGaps.Gap.entries.filter { it.feature.isBlank() || !it.reason.startsWith("needs ${it.feature}, which the test kit") }.shouldBeEmpty()
        TestKitEngineGaps.cases.filter { (key, _) -> key.first.isBlank() || key.second.isBlank() }.keys.shouldBeEmpty()
    }

    test("every listed case is a test of the visible spec-test corpus, and only listed cases get a test kit reason") {
        val corpus = SpecTests.root.walkTopDown().filter { it.isFile && it.extension == "json" }.mapNotNull { f ->
            runCatching { Json.parseToJsonElement(f.readText()).jsonObject }.getOrNull()?.takeIf { it["tests"] != null }
        }.toList()
        val found = HashSet<Pair<String, String>>()
        for (file in corpus) {
            for (t in file["tests"]!!.jsonArray) {
                val test = t as? JsonObject ?: continue
                val key = file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content
                val reason = TestKitEngineGaps.reason(file, test)
                if (key in TestKitEngineGaps.cases) {
                    found += key.first!! to key.second!!
                    reason shouldBe TestKitEngineGaps.cases[key]!!.reason
                } else {
                    reason shouldBe null
                }
            }
        }
        (TestKitEngineGaps.cases.keys - found).shouldBeEmpty()
    }
})
