package dev.mooring.java;

import dev.mooring.cmap.MongoAuthenticationException;
import dev.mooring.cmap.OidcCallbackContext;
import dev.mooring.cmap.OidcCredential;
import dev.mooring.testkit.server.WireServer;
import dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MONGODB-OIDC through the Java facade's CompletionStage callbacks, against the test kit's OIDC server. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaOidcCallbackTest {
    private static final BsonDocument FIND = new BsonDocument("find", new BsonString("coll"));

    private static String uri(WireServer server) {
        return "mongodb://" + server.getAddress() + "/?directConnection=true&retryReads=false&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=20000";
    }

    @Test
    void machineCallbackAuthenticatesOnceAndReauthenticatesOn391() {
        OidcIdentityProvider idp = new OidcIdentityProvider("https://idp.test.invalid", null, List.of());
        List<OidcCallbackContext> contexts = new CopyOnWriteArrayList<>();
        try (WireServer server = JavaTestKit.startOidcServer(idp)) {
            ClusterSettingsBuilder settings = MongoClusters.settingsBuilder(uri(server))
                .oidcCallback(null, ctx -> {
                    contexts.add(ctx);
                    return CompletableFuture.supplyAsync(() -> OidcCredential.of(idp.issue("java-user", 3_600_000L), 3600L));
                });
            try (JavaMongoCluster cluster = MongoClusters.create(settings)) {
                assertEquals(1, cluster.runCommand("test", FIND).join().getNumber("ok").intValue());
                idp.expireAll(); // the next command gets ReauthenticationRequired
                assertEquals(1, cluster.runCommand("test", FIND).join().getNumber("ok").intValue());
            }
        }
        assertEquals(2, contexts.size());
        // auth.md "OIDC Callback": establishing, what is left of connectTimeoutMS (default 10 s); reauthenticating (391), 1 minute
        assertTrue(contexts.get(0).getTimeoutMillis() > 0 && contexts.get(0).getTimeoutMillis() <= 10_000L, "timeout " + contexts.get(0).getTimeoutMillis());
        assertEquals(60_000L, contexts.get(1).getTimeoutMillis());
        assertEquals(1, contexts.get(0).getVersion());
    }

    @Test
    void humanCallbackGetsIdpInfoAndAFailingCallbackIsAnAuthenticationError() {
        OidcIdentityProvider idp = new OidcIdentityProvider("https://idp.test.invalid", "java-client", List.of("openid"));
        List<OidcCallbackContext> contexts = new CopyOnWriteArrayList<>();
        try (WireServer server = JavaTestKit.startOidcServer(idp)) {
            ClusterSettingsBuilder human = MongoClusters.settingsBuilder(uri(server))
                .oidcHumanCallback("someone", ctx -> {
                    contexts.add(ctx);
                    return CompletableFuture.completedFuture(OidcCredential.of(idp.issue("someone", 3_600_000L), null, idp.issueRefresh("someone")));
                }, null);
            try (JavaMongoCluster cluster = MongoClusters.create(human)) {
                cluster.runCommand("test", FIND).join();
            }
            assertNotNull(contexts.get(0).getIdpInfo());
            assertEquals("java-client", contexts.get(0).getIdpInfo().getClientId());

            ClusterSettingsBuilder failing = MongoClusters.settingsBuilder(uri(server))
                .oidcCallback(null, ctx -> CompletableFuture.failedFuture(new IllegalStateException("no identity here")));
            try (JavaMongoCluster cluster = MongoClusters.create(failing)) {
                CompletionException e = assertThrows(CompletionException.class, () -> cluster.runCommand("test", FIND).join());
                MongoAuthenticationException auth = assertInstanceOf(MongoAuthenticationException.class, e.getCause());
                assertTrue(auth.getMessage().contains("MONGODB-OIDC"), auth.getMessage());
                assertTrue(auth.getMessage().contains("no identity here"), auth.getMessage());
            }
        }
    }
}
