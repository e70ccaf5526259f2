package dev.mooring.integration.auth

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.OidcCallback
import dev.mooring.cmap.OidcCallbackContext
import dev.mooring.cmap.OidcCredential
import dev.mooring.events.MooringEvent
import dev.mooring.integration.auth.OidcFixture.Companion.machine
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.testkit.server.auth.oidc.OidcMetadataServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import java.nio.file.Files
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/**
 * MONGODB-OIDC machine workflow against the test kit's [dev.mooring.testkit.server.auth.oidc.OidcServer]:
 * the machine prose tests of auth-mongodb-oidc-tests.md (numbered as there) with a callback, and
 * each built-in ENVIRONMENT (test, k8s, azure, gcp) with its token source on loopback.
 */
class OidcMachineSpec : FunSpec({
    timeout = 180.seconds.inWholeMilliseconds

    /** A callback issuing valid tokens for "machine-user", counting its calls and recording its contexts. */
    class Counting(val fixture: OidcFixture, val bad: (Int) -> Boolean = { false }) : OidcCallback {
        val calls = AtomicInteger()
        val contexts = CopyOnWriteArrayList<OidcCallbackContext>()
        val issued = CopyOnWriteArrayList<String>()
        override suspend fun onRequest(context: OidcCallbackContext): OidcCredential {
            val n = calls.incrementAndGet()
            contexts += context
            val token = if (bad(n)) "not-a-valid-token-$n" else fixture.idp.issue("machine-user")
            issued += token
            return OidcCredential(token, 60.minutes)
        }
    }

    suspend fun withFixture(block: suspend (OidcFixture) -> Unit) = OidcFixture.start().use { block(it) }

    test("1.1 callback is called during authentication") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c ->
                c.find()["ok"]!!.asNumber().intValue() shouldBe 1
            }
            cb.calls.get() shouldBe 1
        }
    }

    test("1.2 callback is called once for multiple connections") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c ->
                coroutineScope { repeat(10) { launch { repeat(100) { c.find() } } } }
            }
            cb.calls.get() shouldBe 1
            (f.server.counters.connectionsOpened > 2) shouldBe true // several pooled connections shared one token
        }
    }

    test("2.1 valid callback inputs") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c -> c.find() }
            val ctx = cb.contexts.single()
            // auth.md "OIDC Callback": min(remaining connectTimeoutMS, remaining timeoutMS); the default connectTimeoutMS is 10 s
            ctx.timeout shouldBeLessThanOrEqualTo 10.seconds
            ctx.timeout shouldBeGreaterThan Duration.ZERO
            ctx.version shouldBe 1
            ctx.username shouldBe null
            ctx.idpInfo shouldBe null
            ctx.refreshToken shouldBe null
        }
    }

    test("2.2 OIDC callback returns null") {
        withFixture { f ->
            f.cluster(f.settings(machine { null })).use { c ->
                authFailure { c.find() }.message!! shouldContain "MONGODB-OIDC"
            }
        }
    }

    test("2.3 OIDC callback returns missing data (an empty access token)") {
        withFixture { f ->
            f.cluster(f.settings(machine { OidcCredential("") })).use { c ->
                authFailure { c.find() }.message!! shouldContain "empty access token"
            }
        }
    }

    test("2.4 invalid client configuration with callback and ENVIRONMENT:test") {
        withFixture { f ->
            shouldThrow<InvalidSettingsException> { f.settings(machine { null } + ("ENVIRONMENT" to "test")) }
                .message!! shouldContain "not both"
        }
    }

    test("2.5 invalid use of ALLOWED_HOSTS with ENVIRONMENT:azure") {
        withFixture { f ->
            shouldThrow<InvalidSettingsException> {
                f.settings(mapOf("ENVIRONMENT" to "azure", "TOKEN_RESOURCE" to "api://x", "ALLOWED_HOSTS" to emptyList<String>()))
            }.message!! shouldContain "ALLOWED_HOSTS"
        }
    }

    test("3.1 a cached token the server rejects is replaced: one more callback, the operation succeeds") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c ->
                c.find()
                f.idp.expireAll() // the Client Cache now holds a token the server rejects
                f.failPoint("find", "closeConnection" to true) // forces a new connection, which must authenticate
                runCatching { c.find() }
                c.find()["ok"]!!.asNumber().intValue() shouldBe 1
            }
            cb.calls.get() shouldBe 2
        }
    }

    test("3.2 authentication failures without cached tokens return an error, the callback called once") {
        withFixture { f ->
            val cb = Counting(f) { true }
            f.cluster(f.settings(machine(cb))).use { c ->
                val e = authFailure { c.find() }
                e.serverCode shouldBe 18
                e.message!! shouldContain "MONGODB-OIDC"
                for (token in cb.issued) e.stackTraceToString() shouldNotContain token
            }
            cb.calls.get() shouldBe 1
        }
    }

    test("3.3 unexpected error code does not clear the cache") {
        withFixture { f ->
            val cb = Counting(f)
            f.failPoint("saslStart", "errorCode" to 20)
            f.cluster(f.settings(machine(cb))).use { c ->
                authFailure { c.find() }.serverCode shouldBe 20
                cb.calls.get() shouldBe 1
                c.find()["ok"]!!.asNumber().intValue() shouldBe 1
                cb.calls.get() shouldBe 1
            }
        }
    }

    test("4.1 reauthentication succeeds") {
        withFixture { f ->
            val cb = Counting(f)
            f.findAcrossReauthentication(f.settings(machine(cb)))["ok"]!!.asNumber().intValue() shouldBe 1
            cb.calls.get() shouldBe 2
        }
    }

    test("4.5 reauthentication succeeds when a session is involved: both finds carry the session's lsid") {
        withFixture { f ->
            val cb = Counting(f)
            val events = CopyOnWriteArrayList<MooringEvent>()
            f.cluster(f.settings(machine(cb)), events).use { c ->
                f.failPoint("find", "errorCode" to 391)
                val session = c.startSession()
                try {
                    c.runRetryableRead("test", OidcFixture.find, session = session)["ok"]!!.asNumber().intValue() shouldBe 1
                    val finds = events.filterIsInstance<CommandStartedEvent>().filter { it.commandName == "find" }
                    finds.size shouldBe 2 // the one that met ReauthenticationRequired, then the same command again
                    finds.forEach { it.command["lsid"] shouldBe session.lsid }
                } finally {
                    session.close()
                }
            }
            cb.calls.get() shouldBe 2
        }
    }

    test("4.1b an in-use pooled connection whose token expired reauthenticates and the command runs again") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c ->
                c.withConnection { conn ->
                    conn.command("test", OidcFixture.find)
                    f.idp.expireAll() // the server now answers 391 on this connection
                    conn.command("test", OidcFixture.find)["ok"]!!.asNumber().intValue() shouldBe 1
                }
            }
            cb.calls.get() shouldBe 2
        }
    }

    val failingAfterReauthentication = listOf<Triple<String, String, suspend (dev.mooring.sdam.MongoCluster) -> Unit>>(
        Triple("4.2 read", "find") { c -> c.find() },
        Triple("4.3 write", "insert") { c -> c.insert() },
    )
    for ((title, command, run) in failingAfterReauthentication) {
        test("$title commands fail if reauthentication fails") {
            withFixture { f ->
                val cb = Counting(f) { it > 1 }
                f.cluster(f.settings(machine(cb))).use { c ->
                    run(c)
                    f.failPoint(command, "errorCode" to 391)
                    authFailure { run(c) }.message!! shouldContain "MONGODB-OIDC"
                }
                cb.calls.get() shouldBe 2
            }
        }
    }

    test("4.4 speculative authentication is used with a cached token and ignored on reauthentication") {
        withFixture { f ->
            val cb = Counting(f)
            f.cluster(f.settings(machine(cb))).use { c ->
                c.insert()
                f.failPoint("insert", "closeConnection" to true)
                runCatching { c.insert() }
                val saslStarts = f.oidc.saslStartCount
                c.insert() // a new connection: speculative authentication with the cached token
                f.oidc.speculativeSuccesses shouldBe 1
                f.oidc.saslStartCount shouldBe saslStarts
                cb.calls.get() shouldBe 1
                f.failPoint("insert", "errorCode" to 391)
                c.insert()["ok"]!!.asNumber().intValue() shouldBe 1
                cb.calls.get() shouldBe 2
                f.oidc.saslStartCount shouldBe saslStarts + 1
                f.oidc.speculativeSuccesses shouldBe 1
            }
        }
    }

    test("tokens never appear in events, logs, settings or errors") {
        withFixture { f ->
            val cb = Counting(f) { it > 1 }
            val events = CopyOnWriteArrayList<MooringEvent>()
            val logs = LogProbe()
            val settings = f.settings(machine(cb)).copy(logging = logs.settings)
            f.cluster(settings, events).use { c ->
                c.find()
                f.failPoint("find", "errorCode" to 391)
                val e = authFailure { c.find() }
                for (token in cb.issued) {
                    e.stackTraceToString() shouldNotContain token
                    settings.toString() shouldNotContain token
                    events.forEach { it.toString() shouldNotContain token }
                    logs.text shouldNotContain token
                }
            }
            logs.sawMessages shouldBe true
            OidcCredential("secret-token-1", refreshToken = "secret-refresh").toString().let {
                it shouldNotContain "secret-token-1"
                it shouldNotContain "secret-refresh"
            }
        }
    }

    // --- built-in environments ---

    suspend fun withOverrides(vararg vars: Pair<String, String>, block: suspend () -> Unit) {
        vars.forEach { (k, v) -> System.setProperty("mooring.internal.oidc.$k", v) }
        try {
            block()
        } finally {
            vars.forEach { (k, _) -> System.clearProperty("mooring.internal.oidc.$k") }
        }
    }

    test("ENVIRONMENT:test reads the token from OIDC_TOKEN_FILE") {
        withFixture { f ->
            val file = Files.createTempFile("oidc", ".jwt").also { Files.writeString(it, f.idp.issue("test_user1") + "\n") }
            withOverrides("OIDC_TOKEN_FILE" to file.toString()) {
                f.cluster(f.settings(mapOf("ENVIRONMENT" to "test"))).use { c -> c.find() }
            }
            f.oidc.authenticatedUsers shouldBe setOf("test_user1")
            Files.delete(file)
        }
    }

    test("a callback cut off by connectTimeoutMS (which bounds the whole handshake) is the connection's timeout, not a callback failure") {
        withFixture { f ->
            val called = CompletableDeferred<Unit>()
            val never = CompletableDeferred<OidcCredential>()
            val cb = OidcCallback { called.complete(Unit); never.await() }
            val settings = ConnectionSettings(
                connectTimeoutMS = 300, socketTimeoutMS = 10_000,
                credential = MongoCredential("MONGODB-OIDC", null, "\$external", null, machine(cb)),
            )
            DefaultConnectionFactory(settings).use { factory ->
                val c = factory.create(f.server.address, 1, 0)
                val e = shouldThrow<MongoNetworkTimeoutException> { c.establish() }
                e.message!! shouldContain "300 ms"
                e.message!! shouldNotContain "did not return within 1m"
                called.isCompleted shouldBe true
                factory.awaitClosed()
            }
        }
    }

    test("the callback's timeout while establishing is what is left of connectTimeoutMS; 1 minute when nothing bounds it (reauthentication, connectTimeoutMS=0)") {
        withFixture { f ->
            for (connectTimeoutMS in listOf(5_000L, 0L)) {
                val cb = Counting(f)
                val settings = ConnectionSettings(
                    connectTimeoutMS = connectTimeoutMS, socketTimeoutMS = 10_000,
                    credential = MongoCredential("MONGODB-OIDC", null, "\$external", null, machine(cb)),
                )
                DefaultConnectionFactory(settings).use { factory ->
                    val c = factory.create(f.server.address, 1, 0)
                    c.establish()
                    c.close()
                    factory.awaitClosed()
                }
                val timeout = cb.contexts.single().timeout
                if (connectTimeoutMS > 0) {
                    timeout shouldBeLessThanOrEqualTo connectTimeoutMS.milliseconds
                    timeout shouldBeGreaterThan Duration.ZERO
                } else {
                    timeout shouldBe 1.minutes
                }
            }
            // reauthentication (391) is not an establishment: no connectTimeoutMS, no timeoutMS here, so 1 minute
            val cb = Counting(f)
            f.findAcrossReauthentication(f.settings(machine(cb)))["ok"]!!.asNumber().intValue() shouldBe 1
            cb.contexts.size shouldBe 2
            cb.contexts[0].timeout shouldBeLessThanOrEqualTo 10.seconds
            cb.contexts[1].timeout shouldBe 1.minutes
            // ... and for an operation with timeoutMS, what is left of it (auth.md: "remaining timeoutMS")
            val timed = Counting(f)
            f.findAcrossReauthentication(f.settings(machine(timed)) { timeoutMS = 5_000 })["ok"]!!.asNumber().intValue() shouldBe 1
            timed.contexts.size shouldBe 2
            timed.contexts[1].timeout shouldBeLessThanOrEqualTo 5.seconds
            timed.contexts[1].timeout shouldBeGreaterThan Duration.ZERO
        }
    }

    test("a reauthentication whose callback outlasts the operation's timeoutMS ends as the operation's timeout") {
        withFixture { f ->
            val calls = AtomicInteger()
            val never = CompletableDeferred<OidcCredential>()
            val cb = OidcCallback { if (calls.incrementAndGet() == 1) OidcCredential(f.idp.issue("machine-user"), 60.minutes) else never.await() }
            f.cluster(f.settings(machine(cb)) { timeoutMS = 1_000 }).use { c ->
                c.find()
                f.failPoint("find", "errorCode" to 391)
                shouldThrow<MongoOperationTimeoutException> { c.find() }
            }
            calls.get() shouldBe 2
        }
    }

    test("ENVIRONMENT:test without OIDC_TOKEN_FILE fails naming the variable") {
        withFixture { f ->
            f.cluster(f.settings(mapOf("ENVIRONMENT" to "test"))).use { c ->
                if (System.getenv("OIDC_TOKEN_FILE") == null) authFailure { c.find() }.message!! shouldContain "OIDC_TOKEN_FILE"
            }
        }
    }

    test("ENVIRONMENT:k8s reads AZURE_FEDERATED_TOKEN_FILE, else AWS_WEB_IDENTITY_TOKEN_FILE") {
        withFixture { f ->
            val azure = Files.createTempFile("aks", ".jwt").also { Files.writeString(it, f.idp.issue("aks-sa")) }
            val aws = Files.createTempFile("eks", ".jwt").also { Files.writeString(it, f.idp.issue("eks-sa")) }
            withOverrides("AZURE_FEDERATED_TOKEN_FILE" to azure.toString(), "AWS_WEB_IDENTITY_TOKEN_FILE" to aws.toString()) {
                f.cluster(f.settings(mapOf("ENVIRONMENT" to "k8s"))).use { c -> c.find() }
            }
            withOverrides("AWS_WEB_IDENTITY_TOKEN_FILE" to aws.toString()) {
                if (System.getenv("AZURE_FEDERATED_TOKEN_FILE") == null) {
                    f.cluster(f.settings(mapOf("ENVIRONMENT" to "k8s"))).use { c -> c.find() }
                }
            }
            f.oidc.authenticatedUsers shouldBe setOf("aks-sa", "eks-sa")
            Files.delete(azure); Files.delete(aws)
        }
    }

    test("ENVIRONMENT:azure calls the metadata service (5.1 no username, 5.2 bad username fails)") {
        withFixture { f ->
            OidcMetadataServer(f.idp).use { meta ->
                withOverrides("AZURE_IMDS_ENDPOINT" to meta.azureEndpoint) {
                    run {
                        val props = mapOf("ENVIRONMENT" to "azure", "TOKEN_RESOURCE" to "api://mongo,a:b")
                        f.cluster(f.settings(props)).use { c -> c.find() }
                        val r = meta.requests.single()
                        r.query["resource"] shouldBe "api://mongo,a:b"
                        r.query["api-version"] shouldBe "2018-02-01"
                        r.query.containsKey("client_id") shouldBe false
                        r.headers["metadata"] shouldBe "true"
                        r.headers["accept"] shouldBe "application/json"
                        f.cluster(f.settings(props, username = "bad")).use { c ->
                            authFailure { c.find() }.message!! shouldContain "Identity not found" // the response body
                        }
                        meta.requests.last().query["client_id"] shouldBe "bad"
                    }
                }
            }
            f.oidc.authenticatedUsers shouldBe setOf("azure-identity")
        }
    }

    test("ENVIRONMENT:gcp calls the metadata server with the audience") {
        withFixture { f ->
            OidcMetadataServer(f.idp).use { meta ->
                withOverrides("GCE_METADATA_ENDPOINT" to meta.gcpEndpoint) {
                    run {
                        f.cluster(f.settings(mapOf("ENVIRONMENT" to "gcp", "TOKEN_RESOURCE" to "mongodb://audience"))).use { c -> c.find() }
                        meta.failWith = 503 to "metadata server unavailable"
                        f.cluster(f.settings(mapOf("ENVIRONMENT" to "gcp", "TOKEN_RESOURCE" to "mongodb://audience"))).use { c ->
                            authFailure { c.find() }.message!! shouldContain "503: metadata server unavailable"
                        }
                    }
                }
                meta.requests.first().query["audience"] shouldBe "mongodb://audience"
                meta.requests.first().headers["metadata-flavor"] shouldBe "Google"
            }
            f.oidc.authenticatedUsers shouldBe setOf("gcp:mongodb://audience")
        }
    }
})
