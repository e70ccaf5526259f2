package dev.mooring.cmap.wire

import dev.mooring.cmap.ClientWireVersion
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.internal.connection.ClientEnvironment
import dev.mooring.cmap.internal.connection.ClientMetadata
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

class ClientMetadataSpec : FunSpec({
    fun inputs(
        appName: String? = "app",
        env: Map<String, String> = emptyMap(),
        docker: Boolean = false,
        info: List<DriverInfo> = emptyList(),
        osName: String = "Linux",
    ) = ClientMetadata.Inputs(appName, info, env, docker, osName, "amd64", "6.1", "Acme", "17.0.1")

    test("the document has driver, os, platform and application name") {
        val d = ClientMetadata.build(inputs())
        d.getDocument("application")["name"] shouldBe BsonString("app")
        d.getDocument("driver")["name"] shouldBe BsonString("mooring")
        d.getDocument("os")["type"] shouldBe BsonString("Linux")
        d.getDocument("os")["architecture"] shouldBe BsonString("amd64")
        d.getString("platform").value shouldStartWith "Java/Acme/17.0.1, Kotlin/"
        d.containsKey("env") shouldBe false
    }

    test("no application document without appName; appName over 128 bytes is rejected") {
        ClientMetadata.build(inputs(appName = null)).containsKey("application") shouldBe false
        ClientMetadata.build(inputs(appName = "a".repeat(128)))
        // the limit is a settings rule (ConnectionSettingsRules), applied before any metadata is built
        shouldThrow<IllegalArgumentException> { dev.mooring.cmap.DefaultConnectionFactory(dev.mooring.cmap.ConnectionSettings(appName = "é".repeat(65))) }
            .message shouldBe "appname must be at most 128 bytes of UTF-8"
    }

    test("os.type maps to uname -s names") {
        ClientMetadata.osType("Mac OS X") shouldBe "Darwin"
        ClientMetadata.osType("Windows 11") shouldBe "Windows"
        ClientMetadata.osType("") shouldBe "unknown"
    }

    // handshake prose Test 1: environment metadata is properly captured (the environment given as input)
    val aws = mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java8", "AWS_REGION" to "us-east-2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" to "1024")
    fun envOf(env: Map<String, String>): BsonDocument? = ClientMetadata.build(inputs(env = env)).also { ClientMetadata.size(it) shouldBeLessThanOrEqual 512 }["env"] as BsonDocument?
    val proseEnvCases = listOf(
        "1. Valid AWS" to (aws to BsonDocument("name", BsonString("aws.lambda")).append("region", BsonString("us-east-2")).append("memory_mb", BsonInt32(1024))),
        "2. Valid Azure" to (mapOf("FUNCTIONS_WORKER_RUNTIME" to "node") to BsonDocument("name", BsonString("azure.func"))),
        "3. Valid GCP" to (
            mapOf("K_SERVICE" to "servicename", "FUNCTION_MEMORY_MB" to "1024", "FUNCTION_TIMEOUT_SEC" to "60", "FUNCTION_REGION" to "us-central1") to
                BsonDocument("name", BsonString("gcp.func")).append("memory_mb", BsonInt32(1024)).append("timeout_sec", BsonInt32(60))
                    .append("region", BsonString("us-central1"))
            ),
        "4. Valid Vercel" to (mapOf("VERCEL" to "1", "VERCEL_REGION" to "cdg1") to BsonDocument("name", BsonString("vercel")).append("region", BsonString("cdg1"))),
        "5. Invalid - multiple providers" to (mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java8", "FUNCTIONS_WORKER_RUNTIME" to "node") to null),
        "6. Invalid - long string" to (mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java8", "AWS_REGION" to "a".repeat(512)) to BsonDocument("name", BsonString("aws.lambda"))),
        "7. Invalid - wrong types" to (mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java8", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" to "big") to BsonDocument("name", BsonString("aws.lambda"))),
        "8. Invalid - AWS_EXECUTION_ENV does not start with AWS_Lambda_" to (mapOf("AWS_EXECUTION_ENV" to "EC2") to null),
        "9. Valid container and FaaS provider" to (
            aws + ("KUBERNETES_SERVICE_HOST" to "1") to
                BsonDocument("name", BsonString("aws.lambda")).append("region", BsonString("us-east-2")).append("memory_mb", BsonInt32(1024))
                    .append("container", BsonDocument("orchestrator", BsonString("kubernetes")))
            ),
    )
    proseEnvCases.forEach { (name, case) ->
        test("handshake prose Test 1.$name") {
            envOf(case.first) shouldBe case.second
        }
    }

    test("duplicate wrapping libraries count once; a missing version or platform leaves that field as it was") {
        val lib = DriverInfo("library", "1.2", "Library Platform")
        val d = ClientMetadata.build(inputs(info = listOf(lib, lib, DriverInfo("framework"))))
        d.getDocument("driver").getString("name").value.endsWith("|library|framework") shouldBe true
        d.getDocument("driver").getString("version").value.endsWith("|1.2") shouldBe true
        d.getString("platform").value.endsWith("|Library Platform") shouldBe true
    }

    test("wrapping libraries are appended with '|'") {
        val d = ClientMetadata.build(inputs(info = listOf(DriverInfo("wrap", "2.0", "plat"))))
        d.getDocument("driver")["name"] shouldBe BsonString("mooring|wrap")
        d.getDocument("driver").getString("version").value.endsWith("|2.0") shouldBe true
        d.getString("platform").value.endsWith("|plat") shouldBe true
        shouldThrow<IllegalArgumentException> { DriverInfo("a|b") }
    }

    test("FaaS detection per provider, with typed fields and precedence") {
        ClientEnvironment.detect(mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java17", "AWS_REGION" to "us-east-2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" to "1024"), false) shouldBe
            BsonDocument("name", BsonString("aws.lambda")).append("region", BsonString("us-east-2")).append("memory_mb", BsonInt32(1024))
        ClientEnvironment.detect(mapOf("AWS_EXECUTION_ENV" to "EC2"), false) shouldBe null
        ClientEnvironment.detect(mapOf("FUNCTIONS_WORKER_RUNTIME" to "java"), false) shouldBe BsonDocument("name", BsonString("azure.func"))
        ClientEnvironment.detect(mapOf("K_SERVICE" to "s", "FUNCTION_MEMORY_MB" to "big", "FUNCTION_TIMEOUT_SEC" to "60"), false) shouldBe
            BsonDocument("name", BsonString("gcp.func")).append("timeout_sec", BsonInt32(60))
        ClientEnvironment.detect(mapOf("VERCEL" to "1", "AWS_LAMBDA_RUNTIME_API" to "x", "VERCEL_REGION" to "cdg1"), false) shouldBe
            BsonDocument("name", BsonString("vercel")).append("region", BsonString("cdg1"))
        ClientEnvironment.detect(mapOf("FUNCTIONS_WORKER_RUNTIME" to "x", "K_SERVICE" to "s"), false) shouldBe null
        ClientEnvironment.detect(mapOf("KUBERNETES_SERVICE_HOST" to "10.0.0.1"), true) shouldBe
            BsonDocument("container", BsonDocument("runtime", BsonString("docker")).append("orchestrator", BsonString("kubernetes")))
    }

    test("truncation: env fields except name go first") {
        val env = mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java17", "AWS_REGION" to "r".repeat(200))
        val d = ClientMetadata.build(inputs(env = env, appName = "a".repeat(128)))
        ClientMetadata.size(d) shouldBeLessThanOrEqual 512
        d.getDocument("env") shouldBe BsonDocument("name", BsonString("aws.lambda"))
        d.getDocument("os").containsKey("name") shouldBe true
    }

    test("truncation: then os fields except type, then env, then platform") {
        val env = mapOf("AWS_EXECUTION_ENV" to "AWS_Lambda_java17")
        val longOs = "L".repeat(150)
        val d1 = ClientMetadata.build(inputs(env = env, appName = "a".repeat(128), osName = "Linux $longOs"))
        ClientMetadata.size(d1) shouldBeLessThanOrEqual 512
        d1.getDocument("os").keys shouldBe setOf("type")
        d1.getDocument("env") shouldBe BsonDocument("name", BsonString("aws.lambda"))

        val hugePlatform = listOf(DriverInfo("w", "1", "p".repeat(400)))
        val d2 = ClientMetadata.build(inputs(env = env, appName = "a".repeat(128), info = hugePlatform))
        ClientMetadata.size(d2) shouldBeLessThanOrEqual 512
        d2.containsKey("env") shouldBe false
        d2.getDocument("os").keys shouldBe setOf("type")
        d2.getString("platform").value shouldStartWith "Java/Acme/17.0.1"
        d2.getDocument("application")["name"] shouldBe BsonString("a".repeat(128))
        // the platform was cut exactly as far as needed
        ClientMetadata.size(d2) shouldBe 512
    }

    test("UTF-8 truncation never splits a code point") {
        ClientMetadata.truncateUtf8("aé€😀", 1) shouldBe "a"
        ClientMetadata.truncateUtf8("aé€😀", 2) shouldBe "a"
        ClientMetadata.truncateUtf8("aé€😀", 3) shouldBe "aé"
        ClientMetadata.truncateUtf8("aé€😀", 9) shouldBe "aé€"
        ClientMetadata.truncateUtf8("aé€😀", 10) shouldBe "aé€😀"
    }

    test("wire-version compatibility messages follow the SDAM spec") {
        val a = ServerAddress("example.com", 27017)
        ClientWireVersion.compatibilityError(a, 0, 7) shouldBe
            "Server at example.com:27017 reports wire version 7, but this version of Mooring requires at least 8 (MongoDB 4.2)."
        ClientWireVersion.compatibilityError(a, 999, 1000) shouldBe
            "Server at example.com:27017 requires wire version 999, but this version of Mooring only supports up to ${ClientWireVersion.MAX}."
        ClientWireVersion.compatibilityError(a, 0, 8) shouldBe null
    }
})
