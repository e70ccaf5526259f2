package dev.mooring.fuzz

import com.code_intelligence.jazzer.api.FuzzedDataProvider
import com.code_intelligence.jazzer.junit.FuzzTest
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings

/**
 * Fuzz target for the connection-string parser: every string parses, or fails with
 * [InvalidSettingsException] (InvalidConnectionStringException is one); turning a parsed string
 * into settings fails only with that type too.
 */
class ConnectionStringFuzzTest {
    @FuzzTest(maxDuration = "60s")
    fun parse(data: FuzzedDataProvider) {
        val prefix = data.pickValue(PREFIXES)
        val uri = prefix + data.consumeRemainingAsString()
        try {
            ConnectionString.parse(uri)
            MongoClusterSettings.fromUri(uri)
        } catch (_: InvalidSettingsException) {
            // the typed error: fine
        }
    }

    private companion object {
        val PREFIXES = listOf("", "mongodb://", "mongodb+srv://", "mongodb://user:pass@", "mongodb://h1,h2/db?", "mongodb://[::1]:27017/?")
    }
}
