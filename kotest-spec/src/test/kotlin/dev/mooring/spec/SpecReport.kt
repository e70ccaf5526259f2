package dev.mooring.spec

import dev.mooring.testkit.SpecTests
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.intOrNull
import kotlinx.serialization.json.jsonPrimitive
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.nio.file.StandardCopyOption
import java.time.Instant

/**
 * Collects outcomes per suite and per file and rewrites the report [target] (`spec-report.json`)
 * after each. A suite's row: total, passed, failed, skipped, every failure and skip,
 * and `files` (per file: passed, failed, skipped, and `ranAt`, the start of the run that wrote it).
 *
 * A run keeps what earlier runs wrote for the files it did not run, file by file: a targeted run
 * of one spec class (a prose spec's `README.md` cases, one suite of several) replaces only its
 * files' entries, never a whole suite's row. A clean build (`mvn clean`, a fresh clone) has only
 * this run's entries; in a tree with older runs, `ranAt` tells each file's run apart.
 */
class SpecReportWriter(private val target: Path, private val runStarted: String) {
    private class FileOutcome(var passed: Int = 0, var failed: Int = 0, var skipped: Int = 0, var ranAt: String)

    private class Suite {
        val files = java.util.TreeMap<String, FileOutcome>()
        val failures = ArrayList<JsonObject>()
        val skips = ArrayList<JsonObject>()
    }

    private val suites = java.util.TreeMap<String, Suite>()

    @Synchronized
    fun passed(suite: String, file: String, test: String) {
        outcome(suite, file).passed++
        write()
    }

    @Synchronized
    fun failed(suite: String, file: String, test: String, message: String) {
        outcome(suite, file).failed++
        suites.getValue(suite).failures += obj("file" to file, "test" to test, "message" to message.take(2000))
        write()
    }

    @Synchronized
    fun skipped(suite: String, file: String, test: String, reason: String) {
        outcome(suite, file).skipped++
        suites.getValue(suite).skips += obj("file" to file, "test" to test, "reason" to reason)
        write()
    }

    /** [file]'s outcome in this run: the first one replaces what an earlier run wrote for it. */
    private fun outcome(suite: String, file: String): FileOutcome {
        loadEarlierRuns()
        val s = suites.getOrPut(suite, ::Suite)
        val o = s.files[file]
        if (o != null && o.ranAt == runStarted) return o
        s.failures.removeIf { it["file"]?.jsonPrimitive?.content == file }
        s.skips.removeIf { it["file"]?.jsonPrimitive?.content == file }
        return FileOutcome(ranAt = runStarted).also { s.files[file] = it }
    }

    private fun obj(vararg p: Pair<String, String>) = JsonObject(p.associate { it.first to JsonPrimitive(it.second) })

    private var loaded = false

    /** Once per JVM: the entries earlier runs wrote, for the files this run does not run. */
    private fun loadEarlierRuns() {
        if (loaded) return
        loaded = true
        if (!Files.exists(target)) return
        val earlier = try {
            Json.parseToJsonElement(Files.readString(target)) as? JsonObject
        } catch (e: Exception) {
            null
        } ?: return
        for ((name, row) in earlier) {
            val r = row as? JsonObject ?: continue
            val files = r["files"] as? JsonObject ?: continue // a row of the old format: dropped
            val s = suites.getOrPut(name, ::Suite)
            for ((f, o) in files) {
                val e = o as? JsonObject ?: continue
                s.files[f] = FileOutcome(e.int("passed"), e.int("failed"), e.int("skipped"), e["ranAt"]?.jsonPrimitive?.content ?: "unknown")
            }
            (r["failures"] as? JsonArray)?.filterIsInstance<JsonObject>()?.let { s.failures += it }
            (r["skips"] as? JsonArray)?.filterIsInstance<JsonObject>()?.let { s.skips += it }
        }
    }

    private fun JsonObject.int(key: String): Int = this[key]?.jsonPrimitive?.intOrNull ?: 0

    private fun write() {
        val merged = java.util.TreeMap<String, JsonElement>()
        for ((name, s) in suites) {
            val files = s.files
            merged[name] = JsonObject(
                linkedMapOf(
                    "total" to JsonPrimitive(files.values.sumOf { it.passed + it.failed + it.skipped }),
                    "passed" to JsonPrimitive(files.values.sumOf { it.passed }),
                    "failed" to JsonPrimitive(files.values.sumOf { it.failed }),
                    "skipped" to JsonPrimitive(files.values.sumOf { it.skipped }),
                    "failures" to JsonArray(s.failures.toList()),
                    "skips" to JsonArray(s.skips.toList()),
                    "files" to JsonObject(
                        files.mapValues { (_, o) ->
                            JsonObject(
                                linkedMapOf(
                                    "passed" to JsonPrimitive(o.passed),
                                    "failed" to JsonPrimitive(o.failed),
                                    "skipped" to JsonPrimitive(o.skipped),
                                    "ranAt" to JsonPrimitive(o.ranAt),
                                ),
                            )
                        },
                    ),
                ),
            )
        }
        Files.createDirectories(target.parent)
        val tmp = Paths.get("$target.${ProcessHandle.current().pid()}.tmp") // one per JVM: two runs in one tree must not share it
        Files.writeString(tmp, pretty.encodeToString(JsonObject.serializer(), JsonObject(merged)))
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    }

    private val pretty = Json { prettyPrint = true }
}

/** The run's [SpecReportWriter] on `kotest-spec/target/spec-report.json` ([file]); one per test JVM. */
object SpecReport {
    /** `spec-report.json`, or `spec-report-external.json` for a run against the deployment `MONGODB_URI` names. */
    val file: File by lazy {
        val external = !System.getenv("MONGODB_URI").isNullOrBlank()
        File(SpecTests.projectRoot(), "kotest-spec/target/spec-report" + (if (external) "-external" else "") + ".json")
    }

    private val writer by lazy { SpecReportWriter(file.toPath(), Instant.now().toString()) }

    fun passed(suite: String, file: String, test: String) = writer.passed(suite, file, test)

    fun failed(suite: String, file: String, test: String, message: String) = writer.failed(suite, file, test, message)

    fun skipped(suite: String, file: String, test: String, reason: String) = writer.skipped(suite, file, test, reason)
}
