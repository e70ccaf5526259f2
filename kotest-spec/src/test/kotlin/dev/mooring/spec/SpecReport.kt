package dev.mooring.spec

import dev.mooring.testkit.SpecTests
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.nio.file.StandardCopyOption

/** Collects outcomes per suite and rewrites `kotest-spec/target/spec-report.json` ([file]) after each. */
object SpecReport {
    private class Suite {
        var passed = 0
        var failed = 0
        var skipped = 0
        val failures = ArrayList<JsonObject>()
        val skips = ArrayList<JsonObject>()
    }

    private val suites = java.util.TreeMap<String, Suite>()

    /** `spec-report.json`, or `spec-report-external.json` for a run against the deployment `MONGODB_URI` names. */
    val file: File by lazy {
        val external = !System.getenv("MONGODB_URI").isNullOrBlank()
        File(SpecTests.projectRoot(), "kotest-spec/target/spec-report" + (if (external) "-external" else "") + ".json")
    }

    @Synchronized
    fun passed(suite: String, file: String, test: String) {
        suites.getOrPut(suite, ::Suite).passed++
        write()
    }

    @Synchronized
    fun failed(suite: String, file: String, test: String, message: String) {
        val s = suites.getOrPut(suite, ::Suite)
        s.failed++
        s.failures += obj("file" to file, "test" to test, "message" to message.take(2000))
        write()
    }

    @Synchronized
    fun skipped(suite: String, file: String, test: String, reason: String) {
        val s = suites.getOrPut(suite, ::Suite)
        s.skipped++
        s.skips += obj("file" to file, "test" to test, "reason" to reason)
        write()
    }

    private fun obj(vararg p: Pair<String, String>) = JsonObject(p.associate { it.first to JsonPrimitive(it.second) })

    private fun write() {
        val merged = LinkedHashMap<String, JsonObject>()
        for ((name, s) in suites) {
            merged[name] = JsonObject(
                linkedMapOf(
                    "total" to JsonPrimitive(s.passed + s.failed + s.skipped),
                    "passed" to JsonPrimitive(s.passed),
                    "failed" to JsonPrimitive(s.failed),
                    "skipped" to JsonPrimitive(s.skipped),
                    "failures" to JsonArray(s.failures.toList()),
                    "skips" to JsonArray(s.skips.toList()),
                ),
            )
        }
        val target: Path = file.toPath()
        Files.createDirectories(target.parent)
        // Suites run in one JVM per Maven run, so the report of this run replaces the last one
        // for the suites it ran and keeps the others' entries.
        val existing = if (Files.exists(target) && !initialized) readExisting(target) else emptyMap()
        initialized = true
        base.putAll(existing.filterKeys { it !in merged })
        val all = java.util.TreeMap<String, kotlinx.serialization.json.JsonElement>(base)
        all.putAll(merged)
        val tmp = Paths.get("$target.${ProcessHandle.current().pid()}.tmp") // one per JVM: two runs in one tree must not share it
        Files.writeString(tmp, pretty.encodeToString(JsonObject.serializer(), JsonObject(all)))
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    }

    private var initialized = false
    private val base = LinkedHashMap<String, kotlinx.serialization.json.JsonElement>()
    private val pretty = kotlinx.serialization.json.Json { prettyPrint = true }

    private fun readExisting(p: Path): Map<String, kotlinx.serialization.json.JsonElement> = try {
        kotlinx.serialization.json.Json.parseToJsonElement(Files.readString(p)) as? JsonObject ?: emptyMap()
    } catch (e: Exception) {
        emptyMap()
    }
}
