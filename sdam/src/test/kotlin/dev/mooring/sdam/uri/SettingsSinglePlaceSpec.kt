package dev.mooring.sdam.uri

import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoClusterSettings.Companion.MIN_HEARTBEAT_FREQUENCY_MS
import dev.mooring.sdam.internal.monitor.MonitorSettings
import dev.mooring.sdam.mongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** Each setting has one place: `loadBalanced` lives in the connection settings; minHeartbeatFrequencyMS is one constant. */
class SettingsSinglePlaceSpec : FunSpec({
    test("loadBalanced from the URI or the DSL is the connections' flag: there is no second copy to disagree with") {
        val fromUri = MongoClusterSettings.fromUri("mongodb://lb.example.com/?loadBalanced=true")
        fromUri.loadBalanced shouldBe true
        fromUri.connection.loadBalanced shouldBe true
        val fromDsl = mongoClusterSettings { hosts("lb.example.com"); loadBalanced = true }
        fromDsl shouldBe fromUri
        // Changing the connection settings changes the cluster's mode with it.
        fromUri.copy(connection = fromUri.connection.copy(loadBalanced = false)).loadBalanced shouldBe false
        // The load-balanced rules follow the one flag, however it was set.
        shouldThrow<InvalidSettingsException> {
            MongoClusterSettings(replicaSet = "rs", connection = fromUri.connection)
        }.message shouldContain "loadBalanced=true"
    }

    test("minHeartbeatFrequencyMS is one constant: the URI's range, the settings rule and the monitors' default agree") {
        val below = MIN_HEARTBEAT_FREQUENCY_MS - 1
        val cs = ConnectionString.parse("mongodb://a/?heartbeatFrequencyMS=$below")
        cs.warnings.single() shouldContain ">= $MIN_HEARTBEAT_FREQUENCY_MS"
        cs.settings.heartbeatFrequencyMS shouldBe MongoClusterSettings().heartbeatFrequencyMS // ignored with a warning
        ConnectionString.parse("mongodb://a/?heartbeatFrequencyMS=$MIN_HEARTBEAT_FREQUENCY_MS").settings.heartbeatFrequencyMS shouldBe MIN_HEARTBEAT_FREQUENCY_MS
        shouldThrow<InvalidSettingsException> { mongoClusterSettings { heartbeatFrequencyMS = below } }.message shouldContain "$MIN_HEARTBEAT_FREQUENCY_MS"
        MonitorSettings(heartbeatFrequencyMS = MIN_HEARTBEAT_FREQUENCY_MS, connectTimeoutMS = 0, mode = dev.mooring.sdam.ServerMonitoringMode.POLL)
            .minHeartbeatFrequencyMS shouldBe MIN_HEARTBEAT_FREQUENCY_MS
    }
})
