package dev.mooring.spec.unified

import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.testkit.SpecTests
import io.kotest.core.spec.style.FunSpec
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlin.reflect.KClass
import kotlin.time.Duration.Companion.seconds

/**
 * The unified runner proves itself on `unified-test-format/valid-fail`: every test of every file
 * fails, and fails with the runner's own [UnifiedTestFailure] (an incompatible schema version, an
 * invalid file, an operation the runner does not implement, a failed expectation), never by
 * being skipped and never by a crash or a deployment it could not reach (a server selection timeout). For the files whose purpose is
 * known here, the kind of failure must be the one the file is about.
 */
class UnifiedFormatValidFailSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    val suite = "unified-test-format/valid-fail"
    val files = SpecTests.files(suite)
    test("$suite: the corpus folder has test files") { check(files.isNotEmpty()) { "no *.json files under $suite" } }
    for (f in files) {
        val rel = SpecTests.relative(suite, f)
        for (case in unifiedCases(Json.parseToJsonElement(f.readText()).jsonObject)) {
            test("$suite/$rel: ${case.name}") {
                // in spec-report.json, a valid-fail case passes when the runner fails it as it must
                try {
                    failsAsItMust(case, rel)
                } catch (e: Throwable) {
                    dev.mooring.spec.SpecReport.failed(suite, rel, case.name, e.toString())
                    throw e
                }
                dev.mooring.spec.SpecReport.passed(suite, rel, case.name)
            }
        }
    }
}) {
    private companion object {
        const val ANY = "*"

        /** Runs [case] and checks it fails with the runner's own failure of the kind its file ([rel]) is about. */
        suspend fun failsAsItMust(case: dev.mooring.spec.SpecCase, rel: String) {
            check(case.skipReason == null) { "a valid-fail test must fail, but the runner would skip it: ${case.skipReason}" }
            val failure = try {
                case.body()
                null
            } catch (e: Throwable) {
                e
            }
            checkNotNull(failure) { "the runner passed a test that must fail" }
            if (failure !is UnifiedTestFailure) throw AssertionError("the test failed with $failure, which is not the runner's own failure", failure)
            // no deployment to reach proves nothing about the file
            generateSequence(failure as Throwable) { it.cause }.firstOrNull { it is MongoServerSelectionTimeoutException }?.let {
                throw AssertionError("the test failed because no server could be selected, not for what the file is about: $failure", failure)
            }
            val expected = EXPECTED[rel.removeSuffix(".json")]?.let { it[case.name] ?: it[ANY] }
            if (expected != null) {
                check(expected.isInstance(failure)) { "expected a ${expected.simpleName}, the runner raised $failure" }
            }
        }

        /** The failure each known file is about, per test (or [ANY] test of the file). */
        val EXPECTED: Map<String, Map<String, KClass<out UnifiedTestFailure>>> = mapOf(
            "schemaVersion-unsupported" to mapOf(ANY to UnifiedTestFailure.IncompatibleSchemaVersion::class),
            "operation-unsupported" to mapOf(ANY to UnifiedTestFailure.UnsupportedByRunner::class),
            "assertNumberConnectionsCheckedOut" to mapOf(
                "operation fails if number of connections is incorrect" to UnifiedTestFailure.ExpectationFailed::class,
                ANY to UnifiedTestFailure.InvalidTestFile::class,
            ),
            "entity-bucket-database-undefined" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "entity-client-apiVersion-unsupported" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "entity-findCursor-malformed" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "ignoreResultAndError" to mapOf(ANY to UnifiedTestFailure.ExpectationFailed::class),
            "kmsProviders-missing_aws_kms_credentials" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "kmsProviders-missing_azure_kms_credentials" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "kmsProviders-missing_gcp_kms_credentials" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "kmsProviders-no_kms" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
            "operator-matchAsRoot" to mapOf(ANY to UnifiedTestFailure.ExpectationFailed::class),
            "returnDocument-enum-invalid" to mapOf(ANY to UnifiedTestFailure.InvalidTestFile::class),
        )
    }
}
