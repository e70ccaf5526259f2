package dev.mooring.architecture

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import java.io.File

/**
 * Each rule of the library has one home that every path calls (issue 29, part 2). These tests read
 * the main sources of the library modules and fail when a second place writes a rule again, or a
 * path goes around its home. They read text, so a rule written again under another spelling is
 * not caught: they guard the homes named here, and a reviewer adds a row for each new rule.
 */
class OneHomeSpec : FunSpec({
    val root = generateSequence(File(System.getProperty("user.dir")).absoluteFile) { it.parentFile }
        .first { File(it, "pom.xml").exists() && File(it, "cmap").isDirectory }
    val sources: Map<String, String> = listOf("events", "cmap", "sdam", "driver", "java")
        .flatMap { m -> File(root, "$m/src/main/kotlin").walkTopDown().filter { it.isFile && it.extension == "kt" }.toList() }
        .associate { it.relativeTo(root).path to it.readText() }

    /** The files (relative paths) whose code, comments left out, contains [text]. */
    fun filesWith(text: String): List<String> =
        sources.filter { (_, code) -> code.lineSequence().filterNot { it.trimStart().startsWith("*") || it.trimStart().startsWith("//") }.any { text in it } }
            .keys.map { it.substringAfterLast('/') }.sorted()

    test("a connection perishes in one place: its own failed command (MongoServerException.perishesConnection)") {
        // PooledConnection's command marks it; ConnectionPool.markPerished is the public hook for a holder's own reason
        filesWith("errored = true").shouldContainExactly("DefaultConnectionPool.kt", "PooledConnection.kt")
        filesWith("is MongoNetworkException || this is MongoProtocolException").shouldContainExactly("MongoErrors.kt")
        filesWith("markPerished(").shouldContainExactly("ConnectionPool.kt", "DefaultConnectionPool.kt") // its declaration and implementation: no path of the library calls it
    }

    test("operations gossip the cluster time through ClusterTimeConnection.gossiped only") {
        filesWith("withClusterTime(").shouldContainExactly("ClusterTimeConnection.kt")
        filesWith("ClusterTimeConnection.observe(").shouldBeEmpty()
        filesWith("ClusterTimeConnection(").shouldContainExactly("ClusterTimeConnection.kt", "OperationContext.kt")
        filesWith("ClusterTimeConnection.gossiped(").shouldContainExactly("CommandOperation.kt")
    }

    test("the command observer travels as an argument only") {
        filesWith("[CommandRequestObserver]").shouldBeEmpty()
        filesWith("withContext(observer)").shouldBeEmpty()
    }

    test("connection settings rules live in ConnectionSettingsRules, topology rules in TopologyRules") {
        for (rule in listOf("connectTimeoutMS must be", "socketTimeoutMS must be", "zlibCompressionLevel must be", "compressors must", "appname must be", "eventLoopThreads must be", "tlsDisableOCSPEndpointCheck=true is not supported")) {
            filesWith(rule).shouldContainExactly("ConnectionSettingsRules.kt")
        }
        filesWith("listOf(SnappyCompressor.NAME").shouldContainExactly("Compressors.kt")
        filesWith("\"snappy\", \"zlib\"").shouldBeEmpty()
        filesWith("MAX_APP_NAME_BYTES: Int = 128").shouldContainExactly("ClientMetadata.kt")
        for (rule in listOf("directConnection=true cannot", "loadBalanced=true cannot", "replicaSet must not be empty", "at least one host is required")) {
            filesWith(rule).shouldContainExactly("TopologyRules.kt")
        }
        filesWith("val proxy: ProxySettings? = null").shouldContainExactly("ConnectionSettings.kt")
    }

    test("the facade delegates: operations are assembled in internal/operation and run by the OperationRunner") {
        val runs = sources.filter { (_, code) -> "runner.run(" in code }.keys.map { it.substringBeforeLast('/').substringAfterLast('/') }.toSet()
        runs shouldBe setOf("operation", "cursor")
    }
})
