package dev.mooring.spec.cmap

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.events.ServerAddress
import dev.mooring.testkit.server.WireServer
import kotlinx.serialization.json.JsonObject
import org.bson.BsonDocument
import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import io.kotest.core.spec.style.FunSpec
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * The cmap-format spec runner: every `*.json` under spec-tests/cmap-format. Unit-style tests
 * run against a pool over [MockConnectionFactory]; integration-style tests (with a failPoint)
 * run against the test kit's wire-protocol server ([WireServer]) over real connections.
 */
/**
 * An integration-style test against a fresh [WireServer] (fail point from the test) and the real
 * [DefaultConnectionFactory] (appName from poolOptions). The test kit implements failCommand
 * the way the servers named in `runOn` do, so `runOn` is satisfied.
 */
private suspend fun runIntegration(test: JsonObject) {
    val server = WireServer.start()
    try {
        test["failPoint"]?.let { server.configureFailPoint(BsonDocument.parse(it.toString())) }
        val appName = test["poolOptions"]?.jsonObject?.get("appName")?.jsonPrimitive?.content
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 30_000, socketTimeoutMS = 30_000, appName = appName))
        try {
            CmapTestRun(test, factory, server.address).run()
        } finally {
            server.clearFailPoint()
            factory.close()
        }
    } finally {
        server.close()
    }
}

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
            "integration" -> listOf(
                SpecCase(name) {
                    withTimeout(60_000) { runIntegration(o) }
                },
            )
            else -> listOf(SpecCase(name) { throw AssertionError("unknown cmap-format style '$style'") })
        }
    }
})
