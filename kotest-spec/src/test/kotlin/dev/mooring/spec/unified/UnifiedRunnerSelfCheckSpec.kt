package dev.mooring.spec.unified

import dev.mooring.testkit.SpecTests
import dev.mooring.testkit.deployment.TestKitDeployment
import io.kotest.assertions.withClue
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainInOrder
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.bson.BsonDocument
import org.bson.BsonString
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/**
 * The unified runner's own rules, each on a small file written here: schema version
 * compatibility, KMS provider checks, the runner's failures that no `ignoreResultAndError` or
 * skip can hide (unknown operations, undefined entities, missing arguments), `$$matchAsDocument`
 * on a string that is no document, initialData's `createOptions`, and initialData's place before
 * the entities.
 */
class UnifiedRunnerSelfCheckSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun file(json: String): JsonObject = Json.parseToJsonElement(json).jsonObject
    fun schema(v: String) = file("""{"schemaVersion": "$v"}""")

    test("schemaVersion: the runner's major version, at most its minor and patch, is compatible") {
        for (v in listOf("1", "1.0", "1.3", "1.27", "1.28", "1.28.0")) UnifiedSchemaVersion.requireCompatible(schema(v))
    }

    test("schemaVersion: another major version, a newer minor or patch, or no version string is refused") {
        for (v in listOf("0.1", "2.0", "1.29", "1.28.1", "", "1.x", "one")) {
            shouldThrow<UnifiedTestFailure.IncompatibleSchemaVersion> { UnifiedSchemaVersion.requireCompatible(schema(v)) }
        }
        shouldThrow<UnifiedTestFailure.IncompatibleSchemaVersion> { UnifiedSchemaVersion.requireCompatible(file("{}")) }
        shouldThrow<UnifiedTestFailure.IncompatibleSchemaVersion> { UnifiedSchemaVersion.requireCompatible(file("""{"schemaVersion": 1.0}""")) }
        // a runner supporting 1.5.1 and 2.0 (the spec's example)
        for (v in listOf("1.4", "1.5", "2.0")) UnifiedSchemaVersion.requireCompatible(schema(v), listOf("1.5.1", "2.0"))
        for (v in listOf("1.6", "2.1", "3.0")) {
            shouldThrow<UnifiedTestFailure.IncompatibleSchemaVersion> { UnifiedSchemaVersion.requireCompatible(schema(v), listOf("1.5.1", "2.0")) }
        }
    }

    test("an incompatible file fails each of its tests, before runOnRequirements or skipReason") {
        val cases = unifiedCases(file("""{"schemaVersion": "2.0", "runOnRequirements": [{"csfle": true}],
            "tests": [{"description": "a", "operations": []}, {"description": "b", "skipReason": "x", "operations": []}]}"""))
        cases.map { it.name } shouldBe listOf("a", "b")
        for (c in cases) {
            c.skipReason.shouldBeNull()
            shouldThrow<UnifiedTestFailure.IncompatibleSchemaVersion> { c.body() }
        }
    }

    test("every unified file of the corpus but valid-fail's has a compatible schemaVersion and well-formed entities") {
        val files = SpecTests.root.walkTopDown().filter { it.isFile && it.name.endsWith(".json") && "valid-fail" !in it.path }
            .map { it to Json.parseToJsonElement(it.readText()) }.filter { (_, j) -> j is JsonObject && "schemaVersion" in j && "tests" in j }.toList()
        files.size shouldBeGreaterThan 100
        for ((f, j) in files) {
            val json = j.jsonObject
            withClue(f.path) {
                UnifiedSchemaVersion.requireCompatible(json)
                json["tests"]!!.jsonArray.forEach { UnifiedFileValidation.requireValid(json, it.jsonObject) }
            }
        }
    }

    fun kms(providers: String) = file("""{"kmsProviders": $providers}""")["kmsProviders"]

    test("kmsProviders: complete, placeholder, on-demand (empty) and named providers are well-formed") {
        KmsProviders.requireValid("t", kms("""{"aws": {"accessKeyId": "a", "secretAccessKey": {"${'$'}${'$'}placeholder": 1}}}"""))
        KmsProviders.requireValid("t", kms("""{"aws": {}, "azure": {}, "gcp": {}, "kmip": {}, "local": {}}"""))
        KmsProviders.requireValid("t", kms("""{"azure": {"accessToken": "t"}, "gcp:name1": {"email": "e", "privateKey": "k"}}"""))
    }

    test("kmsProviders: none at all, a credential field missing, an unknown provider or field are the file's error") {
        for (bad in listOf("{}", """{"aws": {"accessKeyId": "a"}}""", """{"azure": {"tenantId": "t"}}""", """{"gcp": {"email": "e"}}""",
            """{"vault": {"key": "k"}}""", """{"local": {"key": "k", "extra": 1}}""")) {
            shouldThrow<UnifiedTestFailure.InvalidTestFile> { KmsProviders.requireValid("t", kms(bad)) }
        }
    }

    test("an entity naming an undefined entity fails the test even where the test would be skipped for a missing feature") {
        val case = unifiedCases(file("""{"schemaVersion": "1.0", "createEntities": [{"client": {"id": "c"}}, {"bucket": {"id": "b", "database": "d"}}],
            "tests": [{"description": "t", "operations": []}]}""")).single()
        case.skipReason.shouldBeNull()
        shouldThrow<UnifiedTestFailure.InvalidTestFile> { case.body() }.message shouldContain "'d'"
    }

    test("an operation the runner does not know fails the case, never skips it, also inside runOnThread") {
        for (ops in listOf(
            """[{"name": "frobnicate", "object": "client0"}]""",
            """[{"name": "runOnThread", "object": "testRunner", "arguments": {"thread": "t0", "operation": {"name": "frobnicate", "object": "client0"}}}]""",
        )) {
            val case = unifiedCases(file("""{"schemaVersion": "1.0", "createEntities": [{"client": {"id": "client0"}}, {"thread": {"id": "t0"}}],
                "tests": [{"description": "t", "operations": $ops}]}""")).single()
            case.skipReason.shouldBeNull()
            shouldThrow<UnifiedTestFailure.UnsupportedByRunner> { case.body() }.message shouldContain "frobnicate"
        }
    }

    test("an operation the runner does not know fails a tracing test too, rather than being skipped as a helper Mooring lacks") {
        val case = unifiedCases(file("""{"schemaVersion": "1.0", "createEntities": [{"client": {"id": "client0", "observeTracingMessages": {}}}],
            "tests": [{"description": "t", "operations": [{"name": "frobnicate", "object": "client0"}],
            "expectTracingMessages": [{"client": "client0", "spans": []}]}]}""")).single()
        case.skipReason.shouldBeNull()
        shouldThrow<UnifiedTestFailure.UnsupportedByRunner> { case.body() }
    }

    suspend fun runOne(ops: String): Throwable? {
        val case = unifiedCases(file("""{"schemaVersion": "1.3", "createEntities": [{"client": {"id": "client0"}},
            {"database": {"id": "database0", "client": "client0", "databaseName": "db"}},
            {"collection": {"id": "collection0", "database": "database0", "collectionName": "coll"}}],
            "initialData": [{"databaseName": "db", "collectionName": "coll", "documents": []}],
            "tests": [{"description": "t", "operations": $ops}]}""")).single()
        case.skipReason.shouldBeNull()
        return try {
            case.body()
            null
        } catch (e: Throwable) {
            e
        }
    }

    test("ignoreResultAndError hides an operation's error, never the runner's: a missing required argument still fails") {
        runOne("""[{"name": "insertOne", "object": "collection0", "arguments": {"document": {"_id": 1}}},
            {"name": "insertOne", "object": "collection0", "arguments": {"document": {"_id": 1}}, "ignoreResultAndError": true}]""").shouldBeNull()
        runOne("""[{"name": "insertOne", "object": "collection0", "arguments": {"foo": "bar"}, "ignoreResultAndError": true}]""")
            .shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
    }

    test("a special test operation with an argument it has not, or an enum option with no such value, is the file's error") {
        runOne("""[{"name": "wait", "object": "testRunner", "arguments": {"ms": 1, "seconds": 1}}]""").shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
        runOne("""[{"name": "createFindCursor", "object": "collection0", "arguments": {"filter": {}}, "saveResultAsEntity": "cursor0"},
            {"name": "iterateOnce", "object": "cursor0", "arguments": {"times": 2}}]""").shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
        runOne("""[{"name": "findOneAndDelete", "object": "collection0", "arguments": {"filter": {}}},
            {"name": "findOneAndUpdate", "object": "collection0", "arguments": {"filter": {}, "update": {"${'$'}set": {"x": 1}}, "returnDocument": "AFTER"}}]""").shouldBeNull()
        runOne("""[{"name": "findOneAndUpdate", "object": "collection0", "arguments": {"filter": {}, "update": {"${'$'}set": {"x": 1}}, "returnDocument": "later"}}]""")
            .shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
    }

    test("iterating or closing a cursor entity that does not exist is the file's error") {
        for (name in listOf("iterateUntilDocumentOrError", "close")) {
            runOne("""[{"name": "$name", "object": "cursor0"}]""").shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
        }
    }

    test("saveResultAsEntity may not reuse an entity's name") {
        runOne("""[{"name": "createFindCursor", "object": "collection0", "arguments": {"filter": {}}, "saveResultAsEntity": "client0"}]""")
            .shouldBeInstance<UnifiedTestFailure.InvalidTestFile>()
    }

    test("\$\$matchAsDocument: a string that is no Extended JSON document does not match") {
        ValueMatching.matches(BsonDocument.parse("""{"j": {"${'$'}${'$'}matchAsDocument": {"x": 1}}}"""), BsonDocument("j", BsonString("{ \"x\" }"))) shouldBe false
        ValueMatching.matches(BsonDocument.parse("""{"j": {"${'$'}${'$'}matchAsDocument": {"x": 1}}}"""), BsonDocument("j", BsonString("{\"x\": 1}"))) shouldBe true
    }

    test("\$\$unsetOrMatches around \$\$exists applies to the field: unset or present as \$\$exists says") {
        val expected = BsonDocument.parse("""{"r": {"${'$'}${'$'}unsetOrMatches": {"${'$'}${'$'}exists": true}}}""")
        ValueMatching.matches(expected, BsonDocument()) shouldBe true
        ValueMatching.matches(expected, BsonDocument("r", BsonString("t"))) shouldBe true
        ValueMatching.matches(BsonDocument.parse("""{"r": {"${'$'}${'$'}unsetOrMatches": {"${'$'}${'$'}exists": false}}}"""), BsonDocument("r", BsonString("t"))) shouldBe false
    }

    test("initialData: the collection and its queryable-encryption collections are dropped, then created with createOptions") {
        val deployment = TestKitDeployment.start("single")
        val server = (deployment as TestKitDeployment.Single).server
        val seen = Collections.synchronizedList(ArrayList<String>())
        server.handler = { _, _, cmd ->
            val name = cmd.firstKey
            if (name in setOf("drop", "create", "insert")) seen += "$name ${cmd[name]!!.asString().value}" + if (name == "create") " ${cmd["changeStreamPreAndPostImages"]?.asDocument()?.toJson()}" else ""
            null
        }
        val f = file("""{"schemaVersion": "1.9", "initialData": [{"databaseName": "db", "collectionName": "c",
            "createOptions": {"changeStreamPreAndPostImages": {"enabled": true}}, "documents": [{"_id": 1}]}], "tests": []}""")
        UnifiedHost.InProcess(deployment).use { host -> UnifiedTestRun(host, f).run(file("""{"description": "t", "operations": []}""")) }
        seen shouldContainInOrder listOf(
            "drop c", "drop enxcol_.c.esc", "drop enxcol_.c.ecoc", "create c {\"enabled\": true}", "insert c",
        )
    }

    test("a CRUD argument the driver has no option for fails the operation naming it, never dropped") {
        shouldThrow<UnsupportedOperationException> {
            DriverOptions.find("find", CrudOperations.Args(file("""{"filter": {}, "noSuchOption": true}""")))
        }.message shouldContain "'noSuchOption'"
        // rawData is an operation-level option (crud.md), never a bulk write model's
        shouldThrow<UnsupportedOperationException> {
            DriverOptions.writeModel(BsonDocument.parse("""{"deleteOne": {"filter": {}, "rawData": true}}"""))
        }.message shouldContain "'rawData'"
        @OptIn(dev.mooring.driver.MooringRawDataOption::class)
        DriverOptions.find("find", CrudOperations.Args(file("""{"filter": {}, "rawData": true}"""))).rawData shouldBe dev.mooring.driver.RawData.of(true)
        val options = DriverOptions.find("find", CrudOperations.Args(file("""{"filter": {}, "batchSize": 2, "hint": "_id_", "cursorType": "tailableAwait"}""")))
        options.batchSize shouldBe 2
        options.hint shouldBe dev.mooring.driver.Hint.Name("_id_")
        options.cursorType shouldBe dev.mooring.sdam.CursorType.TAILABLE_AWAIT
    }

    test("initialData is set up before the test's entities are created (unified-test-format.md \"Executing a Test\")") {
        val deployment = TestKitDeployment.start("single")
        val server = (deployment as TestKitDeployment.Single).server
        val seen = Collections.synchronizedList(ArrayList<String>())
        server.handler = { _, _, cmd ->
            val app = (cmd["client"] as? BsonDocument)?.getDocument("application", null)?.getString("name", null)?.value
            if (app == "entity-client") seen += "entity client handshake"
            if (cmd.firstKey == "insert") seen += "initialData insert"
            null
        }
        val f = file("""{"schemaVersion": "1.9", "createEntities": [{"client": {"id": "client0", "uriOptions": {"appName": "entity-client"}}}],
            "initialData": [{"databaseName": "db", "collectionName": "c", "documents": [{"_id": 1}]}], "tests": []}""")
        UnifiedHost.InProcess(deployment).use { host -> UnifiedTestRun(host, f).run(file("""{"description": "t", "operations": []}""")) }
        seen.first() shouldBe "initialData insert"
    }
})

private inline fun <reified T : Throwable> Throwable?.shouldBeInstance() {
    if (this !is T) throw AssertionError("expected a ${T::class.simpleName}, got $this", this)
}
