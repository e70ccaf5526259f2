package dev.mooring.spec.unified

import dev.mooring.spec.SpecCase
import dev.mooring.testkit.SpecTests
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import java.io.File
import kotlin.time.Duration.Companion.seconds

/**
 * The unified runner over the wire only: a test-kit replica set runs in a child JVM
 * ([TestKitProcess]), the runner reaches it through the connection string it prints
 * ([ExternalDeployment], [ExternalHost]), and a handful of unified files (fail points, initial
 * data and outcomes, a primary stepped down with `replSetStepDown`, command events) pass there
 * exactly as they pass in process, but for the tests the external deployment cannot host, which
 * are skipped naming it (a version or topology it is not).
 */
class ExternalDeploymentUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds

    test("a test-kit replica set in another process, reached only through MONGODB_URI, passes what the in-process run passes") {
        TestKitProcess.start("replicaset").use { child ->
            child.environment["MONGODB_TOPOLOGY"] shouldBe "replicaset"
            val external = ExternalDeployment.discover(child.environment)
            external.topology shouldBe "replicaset"
            var passedOverTheWire = 0
            for (rel in FILES) {
                val file = Json.parseToJsonElement(File(SpecTests.root, rel).readText()).jsonObject
                val inProcess = unifiedCases(file, null).map { outcome(it) }
                val overTheWire = unifiedCases(file, external).map { outcome(it) }
                // the test kit in the other process has the same data engine: what it lacks fails there, and is not compared
                val engineGaps = file["tests"]!!.jsonArray.map { TestKitEngineGaps.reason(file, it.jsonObject) }
                inProcess.zip(overTheWire).zip(engineGaps).forEach { (outcomes, engineGap) ->
                    val (local, remote) = outcomes
                    val where = "$rel: ${local.name}"
                    if (engineGap != null) return@forEach
                    check(remote !is Outcome.Failed) { "$where failed over the wire (in process: $local): ${(remote as Outcome.Failed).error}" }
                    when (local) {
                        is Outcome.Passed -> check(remote is Outcome.Passed || (remote is Outcome.Skipped && "external deployment" in remote.reason)) {
                            "$where passes in process but over the wire: $remote"
                        }
                        is Outcome.Skipped -> check(remote is Outcome.Skipped) { "$where is skipped in process (${local.reason}) but over the wire: $remote" }
                        is Outcome.Failed -> error("$where fails in process: ${local.error}")
                    }
                    if (remote is Outcome.Passed) passedOverTheWire++
                }
            }
            passedOverTheWire shouldBeGreaterThan 20
        }
    }
}) {
    private sealed interface Outcome {
        val name: String

        data class Passed(override val name: String) : Outcome
        data class Skipped(override val name: String, val reason: String) : Outcome
        data class Failed(override val name: String, val error: Throwable) : Outcome
    }

    private companion object {
        /**
         * Fail points, initialData and outcomes, a stepped-down primary, command monitoring: about
         * a minute in all (in process and over the wire), most of it insertOne-serverErrors.
         */
        val FILES = listOf(
            "retryable-writes/insertOne-serverErrors.json",
            "run-command/runCommand.json",
            "sdam-unified/rediscover-quickly-after-step-down.json",
            "sdam-unified/insert-shutdown-error.json",
            "command-logging-and-monitoring/monitoring/find.json",
        )

        suspend fun outcome(case: SpecCase): Outcome {
            case.skipReason?.let { return Outcome.Skipped(case.name, it) }
            return try {
                case.body()
                Outcome.Passed(case.name)
            } catch (e: Exception) {
                Outcome.Failed(case.name, e)
            } catch (e: AssertionError) {
                Outcome.Failed(case.name, e)
            }
        }
    }
}
