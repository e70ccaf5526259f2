package dev.mooring.spec.unified

import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import io.kotest.core.spec.Spec
import io.kotest.core.spec.style.FunSpec
import io.kotest.core.spec.style.scopes.FunSpecRootScope
import io.kotest.engine.concurrency.TestExecutionMode
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlin.time.Duration.Companion.seconds

/**
 * The `sdam-unified` suite over the test kit: each test runs against a simulated standalone
 * server, replica set, sharded cluster or load balancer with [dev.mooring.sdam.MongoCluster]
 * clients; tests the kit or the library cannot host are skipped with the reason.
 */
class SdamUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("sdam-unified")
})

/**
 * Registers the unified-format tests of [suite] (see [specSuite]) as [unifiedCases] on the
 * deployment `MONGODB_URI` names ([ExternalDeployment.fromEnvironment], one test at a time), else
 * on the test kit in this process.
 */
fun FunSpecRootScope.unifiedSuite(suite: String) {
    val external = ExternalDeployment.fromEnvironment
    // the tests share the external deployment (its fail points, its collections): one at a time
    if (external != null) (this as? Spec)?.testExecutionMode = TestExecutionMode.Sequential
    specSuite(suite) { _, json -> unifiedCases(json.jsonObject, external) }
}

/**
 * The cases of one unified-format [file]: with [external] null, each on a fresh in-process
 * [UnifiedHost] the test kit hosts for its runOnRequirements; with an [external] deployment, each
 * whose requirements it meets runs on it ([ExternalHost]). A test is skipped only when the file
 * marks it skipped, when no deployment meets its runOnRequirements (the format's own rule), or
 * when [KnownGaps] names it or the library feature it needs, or (in process) when the test kit
 * lacks a server feature it needs ([TestKitEngineGaps], per case); a
 * test this runner cannot run for any other reason (an event, entity or operation it does not
 * implement) fails with that reason, never skips. Before any of that, a file whose schemaVersion
 * the runner does not support ([UnifiedSchemaVersion]) or whose entities are malformed
 * ([UnifiedFileValidation]) fails every test it has.
 */
fun unifiedCases(file: JsonObject, external: ExternalDeployment? = null): List<SpecCase> {
    // "Executing a Test File": an incompatible file is not processed further; each of its tests fails
    val incompatible = try {
        UnifiedSchemaVersion.requireCompatible(file)
        null
    } catch (e: UnifiedTestFailure) {
        e
    }
    val tests = file["tests"] as? JsonArray ?: return listOf(SpecCase("<file>") { throw incompatible ?: invalidTest("the file has no tests array (required)") })
    if (incompatible != null) return tests.map { t -> SpecCase((t as? JsonObject)?.get("description")?.jsonPrimitive?.content ?: "<test>") { throw incompatible } }
    val fileReqs = file["runOnRequirements"]?.jsonArray?.map { it.jsonObject }
    return tests.map { t ->
        val test = t.jsonObject
        val name = test["description"]!!.jsonPrimitive.content
        // a malformed entity fails the test, whether or not it would be skipped (UnifiedFileValidation)
        try {
            UnifiedFileValidation.requireValid(file, test)
        } catch (e: UnifiedTestFailure) {
            return@map SpecCase(name) { throw e }
        }
        val testReqs = test["runOnRequirements"]?.jsonArray?.map { it.jsonObject }
        val marked = test["skipReason"]?.jsonPrimitive?.content?.let { "the test file marks it skipped: $it" }
        if (external != null) {
            val reason = marked ?: ExternalRequirements.unmet(external, fileReqs, testReqs) ?: KnownGaps.reason(file, test) ?: missingFeatureReason(file, test)
            SpecCase(name, reason) {
                unsupportedReason(file, test)?.let { throw UnifiedTestFailure.UnsupportedByRunner("this runner cannot run the test: $it") }
                ExternalRequirements.oneAtATime { UnifiedTestRun(ExternalHost(external), file).run(test) }
            }
        } else {
            val choice = hostChoice(fileReqs, testReqs)
            val reason = marked ?: if (choice == null) {
                unsatisfiedReason(fileReqs, testReqs)
            } else {
                KnownGaps.reason(file, test) ?: missingFeatureReason(file, test) ?: TestKitEngineGaps.reason(file, test)
            }
            SpecCase(name, reason) {
                unsupportedReason(file, test)?.let { throw UnifiedTestFailure.UnsupportedByRunner("this runner cannot run the test: $it") }
                UnifiedHost.start(choice!!.topology, choice.auth, choice.mechanism, choice.version.maxWireVersion).use { host -> UnifiedTestRun(host, file).run(test) }
            }
        }
    }
}

/** A deployment the test kit can start: a topology name of runOnRequirements, with or without authentication (and its mechanism), of a server version. */
class HostChoice(val topology: String, val auth: Boolean, val version: SimulatedVersion, val mechanism: String? = null)

/** A MongoDB version the test kit simulates, and the topologies it can host it on. */
class SimulatedVersion(val version: String, val maxWireVersion: Int, val topologies: List<String>)

/**
 * The versions the test kit simulates, in order of preference: 7.0 everywhere; 6.0 and 4.4 in the
 * replica set simulator, 4.2 in it and in the sharded cluster simulator (whose servers then report
 * that wire version and, before 4.4, do not label retryable write errors); last, for the tests
 * that need it, 8.0 (wire version 25) in the replica set and sharded cluster simulators, whose
 * servers then answer the `bulkWrite` admin command (client bulk write) as MongoDB 8.0 does; after
 * it, for the tests that need MongoDB 8.2, 8.2 (wire version 27) in the same simulators, whose
 * servers then take the `rawData` field (crud.md) that older ones refuse as an unknown field.
 */
private val SIMULATED_VERSIONS = listOf(
    SimulatedVersion("7.0", 21, UnifiedHost.hostable),
    SimulatedVersion("6.0", 17, listOf("replicaset")),
    SimulatedVersion("4.4", 9, listOf("replicaset")),
    SimulatedVersion("4.2", 8, listOf("replicaset", "sharded")),
    SimulatedVersion("8.0", 25, listOf("replicaset", "sharded")),
    SimulatedVersion("8.2", 27, listOf("replicaset", "sharded")),
)

/**
 * The first deployment (no authentication preferred) that satisfies both the file's and the
 * test's runOnRequirements (each list: any one requirement suffices; null: no requirement).
 */
private fun hostChoice(fileReqs: List<JsonObject>?, testReqs: List<JsonObject>?): HostChoice? {
    for (auth in listOf(false, true)) {
        for (version in SIMULATED_VERSIONS) {
            for (topology in version.topologies) {
                if (auth && topology !in UnifiedHost.hostableWithAuth) continue
                if (satisfies(fileReqs, topology, auth, null, version.version) && satisfies(testReqs, topology, auth, null, version.version)) {
                    return HostChoice(topology, auth, version)
                }
            }
        }
    }
    for (mechanism in UnifiedHost.hostableMechanisms) {
        val newest = SIMULATED_VERSIONS.first()
        if (satisfies(fileReqs, "single", true, mechanism, newest.version) && satisfies(testReqs, "single", true, mechanism, newest.version)) {
            return HostChoice("single", true, newest, mechanism)
        }
    }
    return null
}

internal fun satisfies(reqs: List<JsonObject>?, topology: String, auth: Boolean, mechanism: String?, version: String): Boolean =
    reqs == null || reqs.any { r -> accepts(r, topology, auth, mechanism, version) }

private fun accepts(r: JsonObject, topology: String, auth: Boolean, mechanism: String?, version: String): Boolean {
    if (r.keys.any { it !in KNOWN_REQUIREMENTS }) return false
    // Mooring has no client-side encryption: csfle may only be absent or false
    if (needsCsfle(r)) return false
    val wantsAuth = (r["auth"] as? JsonPrimitive)?.booleanOrNull
    if (wantsAuth != null && wantsAuth != auth) return false
    // authMechanism: the deployment authenticates with exactly that mechanism (null: the SCRAM host)
    if (r["authMechanism"]?.jsonPrimitive?.content != mechanism) return false
    if (r["serverless"]?.jsonPrimitive?.content == "require") return false
    val min = r["minServerVersion"]?.jsonPrimitive?.content
    if (min != null && compareVersions(min, version) > 0) return false
    val max = r["maxServerVersion"]?.jsonPrimitive?.content
    if (max != null && compareVersions(max, version) < 0) return false
    val topologies = r["topologies"]?.jsonArray?.map { it.jsonPrimitive.content } ?: return true
    return topology in topologies
}

/** The newest server version the test kit's servers claim. */
private val SIMULATED_VERSION = SIMULATED_VERSIONS.maxWith { a, b -> compareVersions(a.version, b.version) }.version
private val KNOWN_REQUIREMENTS = setOf("minServerVersion", "maxServerVersion", "topologies", "serverless", "auth", "authMechanism", "csfle")

/** True when the runOnRequirement [r] needs client-side encryption (`csfle` present and not false). */
internal fun needsCsfle(r: JsonObject): Boolean = r["csfle"]?.let { (it as? JsonPrimitive)?.booleanOrNull != false } ?: false

private fun compareVersions(a: String, b: String): Int {
    val x = a.split('.').map { it.toIntOrNull() ?: 0 }
    val y = b.split('.').map { it.toIntOrNull() ?: 0 }
    for (i in 0 until maxOf(x.size, y.size)) {
        val c = (x.getOrElse(i) { 0 }).compareTo(y.getOrElse(i) { 0 })
        if (c != 0) return c
    }
    return 0
}

/** Why no deployment satisfies the file's and the test's runOnRequirements together. */
private fun unsatisfiedReason(fileReqs: List<JsonObject>?, testReqs: List<JsonObject>?): String = when {
    hostChoice(fileReqs, null) == null -> requirementsReason(fileReqs!!)
    hostChoice(null, testReqs) == null -> requirementsReason(testReqs!!)
    else -> "needs a deployment meeting both the file's runOnRequirements $fileReqs and the test's $testReqs, " +
        "which the test kit cannot combine (it authenticates on ${UnifiedHost.hostableWithAuth.joinToString("/")} only)"
}

private fun requirementsReason(reqs: List<JsonObject>): String {
    if (reqs.all(::needsCsfle)) return KnownGaps.missingFeature("runOnRequirements", "csfle")!!
    val newer = reqs.mapNotNull { it["minServerVersion"]?.jsonPrimitive?.content }.filter { compareVersions(it, SIMULATED_VERSION) > 0 }
    if (newer.isNotEmpty() && newer.size == reqs.size) return "needs MongoDB ${newer.min()}+; the test kit simulates MongoDB $SIMULATED_VERSION at most"
    val oldest = SIMULATED_VERSIONS.minWith { a, b -> compareVersions(a.version, b.version) }.version
    val older = reqs.mapNotNull { it["maxServerVersion"]?.jsonPrimitive?.content }.filter { compareVersions(it, oldest) < 0 }
    if (older.isNotEmpty() && older.size == reqs.size) {
        return "needs MongoDB ${older.max()} or older; the test kit simulates MongoDB ${SIMULATED_VERSIONS.joinToString { "${it.version} (${it.topologies.joinToString("/")})" }}"
    }
    reqs.flatMap { it.keys }.firstOrNull { it !in KNOWN_REQUIREMENTS }?.let { return "needs the runOnRequirements '$it', which the test kit cannot provide" }
    if (reqs.all { it["serverless"]?.jsonPrimitive?.content == "require" }) return "needs a serverless deployment, which the test kit does not simulate"
    val wanted = reqs.flatMap { r -> r["topologies"]?.jsonArray?.map { it.jsonPrimitive.content } ?: emptyList() }.distinct()
    if (reqs.all { (it["auth"] as? JsonPrimitive)?.booleanOrNull == true }) {
        return "needs an authenticated ${wanted.joinToString("/")} deployment: the test kit authenticates (ScramServer) on standalone " +
            "servers, mongos routers and load balancers, not in its replica set simulator"
    }
    return "needs a ${wanted.joinToString("/")} deployment, which the test kit does not simulate (it hosts ${UnifiedHost.hostable.joinToString("/")})"
}

/** The entities the runner creates. */
private val RUNNER_ENTITIES = setOf("client", "database", "collection", "thread", "session", "cursor", "bucket")

private fun entityKinds(file: JsonObject, test: JsonObject): Set<String> =
    Regex("\\{\"(\\w+)\":\\{\"id\"").findAll(file.toString() + test.toString()).map { it.groupValues[1] }.toSet()

/** The [KnownGaps] reason when [test] needs an entity or operation of a library feature Mooring deliberately lacks (a named skip), or null. */
private fun missingFeatureReason(file: JsonObject, test: JsonObject): String? =
    (entityKinds(file, test) - RUNNER_ENTITIES).firstNotNullOfOrNull { KnownGaps.missingFeature("entity", it) }
        ?: (operationNames(test["operations"]!!) - UnifiedTestRun.SUPPORTED_OPERATIONS).firstNotNullOfOrNull { KnownGaps.missingFeature("operation", it) }

/** What in [test] this runner does not implement (the test then fails with it), or null. */
private fun unsupportedReason(file: JsonObject, test: JsonObject): String? {
    val text = test.toString()
    val events = Regex("\"(\\w+Event)\"").findAll(text).map { it.groupValues[1] }.filter { it !in UnifiedTestRun.SUPPORTED_OPERATIONS }.toSet()
    (events - EventMatching.all.keys).firstOrNull()?.let { return "asserts $it, which this runner does not map to a Mooring event" }
    (entityKinds(file, test) - RUNNER_ENTITIES).firstOrNull()?.let { return "creates a $it entity, which this runner does not implement" }
    (operationNames(test["operations"]!!) - UnifiedTestRun.SUPPORTED_OPERATIONS).firstOrNull()?.let { return "uses the $it operation, which this runner does not implement" }
    return null
}

private fun operationNames(e: JsonElement): Set<String> = when (e) {
    is JsonArray -> e.flatMap { operationNames(it) }.toSet()
    is JsonObject -> {
        val own = if (e["name"] is JsonPrimitive && e["object"] is JsonPrimitive) setOf(e["name"]!!.jsonPrimitive.content) else emptySet()
        own + e.values.flatMap { operationNames(it) }
    }
    else -> emptySet()
}
