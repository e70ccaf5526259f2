package dev.mooring.java;

import dev.mooring.events.LogComponent;
import dev.mooring.events.LogLevel;
import dev.mooring.events.LogMessage;
import dev.mooring.events.LoggingSettings;
import dev.mooring.sdam.InvalidSettingsException;
import dev.mooring.sdam.MongoClusterSettings;
import dev.mooring.sdam.ReadPreference;
import dev.mooring.sdam.ServerMonitoringMode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java settings builder produces the same settings objects as connection strings, with the same validation. */
class JavaSettingsBuilderTest {

    @Test
    void theBuilderProducesTheSameSettingsAsTheEquivalentUri() {
        MongoClusterSettings built = MongoClusters.settingsBuilder()
                .hosts("a.example.com:27017", "b.example.com:27018")
                .replicaSet("rs0")
                .heartbeatFrequencyMS(2_000)
                .serverSelectionTimeoutMS(5_000)
                .localThresholdMS(20)
                .serverMonitoringMode(ServerMonitoringMode.POLL)
                .readPreference(ReadPreference.SECONDARY_PREFERRED)
                .retryWrites(false)
                .applyToPoolSettings(pool -> pool.maxPoolSize(7).minPoolSize(1).maxIdleTimeMS(60_000).maxConnecting(3).waitQueueTimeoutMS(1_000))
                .applyToConnectionSettings(c -> c.appName("billing").connectTimeoutMS(3_000).socketTimeoutMS(9_000))
                .applyToTlsSettings(tls -> tls.enabled(true).insecure(true))
                .build();
        MongoClusterSettings parsed = MongoClusterSettings.fromUri("mongodb://a.example.com:27017,b.example.com:27018/?replicaSet=rs0"
                + "&heartbeatFrequencyMS=2000&serverSelectionTimeoutMS=5000&localThresholdMS=20&serverMonitoringMode=poll"
                + "&readPreference=secondaryPreferred&retryWrites=false&maxPoolSize=7&minPoolSize=1&maxIdleTimeMS=60000"
                + "&maxConnecting=3&waitQueueTimeoutMS=1000&appname=billing&connectTimeoutMS=3000&socketTimeoutMS=9000"
                + "&tls=true&tlsInsecure=true");
        assertEquals(parsed, built);
    }

    @Test
    void plainWithoutTlsIsAllowedOnlyWhenAsked() {
        assertEquals(false, MongoClusters.settingsBuilder().build().getConnection().getAllowPlainAuthWithoutTls());
        MongoClusterSettings allowed = MongoClusters.settingsBuilder()
                .applyToConnectionSettings(c -> c.allowPlainAuthWithoutTls(true))
                .build();
        assertEquals(true, allowed.getConnection().getAllowPlainAuthWithoutTls());
    }

    @Test
    void eventLoopThreadsIsSetAndValidated() {
        MongoClusterSettings one = MongoClusters.settingsBuilder()
                .applyToConnectionSettings(c -> c.eventLoopThreads(1))
                .build();
        assertEquals(1, one.getConnection().getEventLoopThreads());
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.settingsBuilder()
                .applyToConnectionSettings(c -> c.eventLoopThreads(0))
                .build());
    }

    @Test
    void stepsApplyInOrderOverAConnectionString() {
        MongoClusterSettings s = MongoClusters.settingsBuilder("mongodb://h:1/?maxPoolSize=5&appname=first")
                .applyToPoolSettings(pool -> pool.maxPoolSize(9))
                .build();
        assertEquals(9, s.getPool().getMaxPoolSize());
        assertEquals("first", s.getConnection().getAppName());

        MongoClusterSettings derived = MongoClusters.settingsBuilder(s).heartbeatFrequencyMS(1_000).build();
        assertEquals(1_000, derived.getHeartbeatFrequencyMS());
        assertEquals(9, derived.getPool().getMaxPoolSize());
    }

    @Test
    void aLogSinkFromJavaReceivesTheClientsMessagesAtItsComponentLevels() {
        java.util.List<LogMessage> got = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        LoggingSettings logging = new LoggingSettings(got::add, java.util.Map.of(LogComponent.TOPOLOGY, LogLevel.DEBUG));
        MongoClusterSettings s = MongoClusters.settingsBuilder("mongodb://127.0.0.1:1/").logging(logging).build();
        assertSame(logging, s.getLogging());
        MongoClusters.create(s).close();
        assertTrue(got.stream().anyMatch(m -> m.getMessage().equals("Starting topology monitoring")));
        assertTrue(got.stream().allMatch(m -> m.getComponent() == LogComponent.TOPOLOGY && m.getLevel() == LogLevel.DEBUG));
        assertEquals(1000, new LoggingSettings().getMaxDocumentLength());
    }

    @Test
    void invalidSettingsFailAtBuildWithTheTypedError() {
        ClusterSettingsBuilder direct = MongoClusters.settingsBuilder().hosts("a:1", "b:2").directConnection(true);
        assertThrows(InvalidSettingsException.class, direct::build);
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.create(direct));
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.settingsBuilder().heartbeatFrequencyMS(100).build());
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.settingsBuilder().applyToPoolSettings(p -> p.maxPoolSize(-1)).build());
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.settingsBuilder().hosts("bad host:x").build());
        assertThrows(InvalidSettingsException.class, () -> MongoClusters.settingsBuilder("mongodb://").build());
        assertThrows(IllegalArgumentException.class, () -> MongoClusters.settingsBuilder().eventBufferCapacity(0));
    }
}
