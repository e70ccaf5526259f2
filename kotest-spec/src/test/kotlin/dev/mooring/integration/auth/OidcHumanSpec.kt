package dev.mooring.integration.auth

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.IdpInfo
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.OidcCallback
import dev.mooring.cmap.OidcCallbackContext
import dev.mooring.cmap.OidcCredential
import dev.mooring.events.MooringEvent
import dev.mooring.integration.auth.OidcFixture.Companion.human
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/**
 * MONGODB-OIDC human workflow against the test kit: the human prose tests of
 * auth-mongodb-oidc-tests.md (numbered as there), with the identity provider of the test kit in
 * place of a real one (one or two principals, refresh tokens).
 */
class OidcHumanSpec : FunSpec({
    timeout = 180.seconds.inWholeMilliseconds

    /** A human callback: checks its inputs, issues tokens for [user] and a refresh token each time. */
    class Human(
        val fixture: OidcFixture,
        val user: String = "test_user1",
        val withRefresh: Boolean = true,
        val badAccess: (Int) -> Boolean = { false },
        val badRefresh: Boolean = false,
    ) : OidcCallback {
        val calls = AtomicInteger()
        val contexts = CopyOnWriteArrayList<OidcCallbackContext>()
        override suspend fun onRequest(context: OidcCallbackContext): OidcCredential {
            val n = calls.incrementAndGet()
            contexts += context
            val access = if (badAccess(n)) "bad-access-$n" else fixture.idp.issue(user)
            val refresh = if (!withRefresh) null else if (badRefresh) "bad-refresh-$n" else fixture.idp.issueRefresh(user)
            return OidcCredential(access, 5.minutes, refresh)
        }
    }

    suspend fun withFixture(idp: OidcIdentityProvider = OidcIdentityProvider(), block: suspend (OidcFixture) -> Unit) =
        OidcFixture.start(idp).use { block(it) }

    test("1.1 single principal, implicit username") {
        withFixture { f ->
            val cb = Human(f)
            f.cluster(f.settings(human(cb))).use { c -> c.find()["ok"]!!.asNumber().intValue() shouldBe 1 }
            f.oidc.principalStepCount shouldBe 1
            f.oidc.authenticatedUsers shouldBe setOf("test_user1")
        }
    }

    test("1.2 single principal, explicit username") {
        withFixture { f ->
            f.cluster(f.settings(human(Human(f)), username = "test_user1@example.test")).use { c -> c.find() }
        }
    }

    test("1.3, 1.4, 1.5 multiple principals: user 1, user 2, and no user fails") {
        withFixture { f ->
            f.oidc.knownPrincipals = setOf("test_user1@example.test", "test_user2@example.test")
            f.cluster(f.settings(human(Human(f)), username = "test_user1@example.test")).use { c -> c.find() }
            f.cluster(f.settings(human(Human(f, user = "test_user2")), username = "test_user2@example.test")).use { c -> c.find() }
            f.oidc.authenticatedUsers shouldBe setOf("test_user1", "test_user2")
            f.cluster(f.settings(human(Human(f)))).use { c -> authFailure { c.find() }.serverCode shouldBe 18 }
        }
    }

    test("1.6 allowed hosts blocked: a client-side error, the callback never called") {
        withFixture { f ->
            val cb = Human(f)
            f.cluster(f.settings(human(cb, allowedHosts = emptyList()))).use { c ->
                val e = authFailure { c.find() }
                e.message!! shouldContain "ALLOWED_HOSTS"
                e.serverCode shouldBe null
            }
            val port = f.server.address.port
            f.cluster(f.settings(human(cb, allowedHosts = listOf("example.com")), host = "localhost:$port")).use { c ->
                authFailure { c.find() }.message!! shouldContain "ALLOWED_HOSTS"
            }
            cb.calls.get() shouldBe 0
            f.oidc.saslStartCount shouldBe 0
        }
    }

    test("1.7 ALLOWED_HOSTS in the connection string is a configuration error") {
        shouldThrow<InvalidSettingsException> {
            MongoClusterSettings.fromUri("mongodb+srv://example.com/?authMechanism=MONGODB-OIDC&authMechanismProperties=ALLOWED_HOSTS:%5B%22example.com%22%5D")
        }.message!! shouldContain "ALLOWED_HOSTS"
    }

    test("1.8 machine IdP (no clientId) with a human callback") {
        withFixture(OidcIdentityProvider(clientId = null)) { f ->
            val cb = Human(f, user = "test_machine")
            f.cluster(f.settings(human(cb), username = "test_machine")).use { c -> c.find() }
            cb.contexts.single().idpInfo!!.clientId shouldBe null
        }
    }

    test("2.1 valid callback inputs") {
        withFixture { f ->
            val cb = Human(f)
            f.cluster(f.settings(human(cb), username = "test_user1@example.test")).use { c -> c.find() }
            val ctx = cb.contexts.single()
            ctx.timeout shouldBe 5.minutes
            ctx.version shouldBe 1
            ctx.username shouldBe "test_user1@example.test"
            ctx.idpInfo shouldBe IdpInfo(f.idp.issuer, f.idp.clientId, f.idp.requestScopes)
            ctx.refreshToken shouldBe null
        }
    }

    /** Settings for a bare connection (no monitor, no pool) to [f]'s server with connectTimeoutMS=[connectTimeoutMS] and [cb] as the human callback. */
    fun humanConnection(f: OidcFixture, connectTimeoutMS: Long, cb: OidcCallback) = ConnectionSettings(
        connectTimeoutMS = connectTimeoutMS, socketTimeoutMS = 10_000,
        credential = MongoCredential("MONGODB-OIDC", null, "\$external", null, human(cb)),
    )

    /** A human callback slower than [connectTimeoutMS] (the human logging in): it returns only after three times that. */
    class SlowHuman(val fixture: OidcFixture, val connectTimeoutMS: Long) : OidcCallback {
        val contexts = CopyOnWriteArrayList<OidcCallbackContext>()
        override suspend fun onRequest(context: OidcCallbackContext): OidcCredential {
            contexts += context
            delay(3 * connectTimeoutMS)
            return OidcCredential(fixture.idp.issue("test_user1"), 5.minutes, null)
        }
    }

    test("auth.md 'OIDC Human Callback': a human callback slower than connectTimeoutMS is not cut off by it (5 minutes)") {
        withFixture { f ->
            val cb = SlowHuman(f, connectTimeoutMS = 1_000)
            DefaultConnectionFactory(humanConnection(f, 1_000, cb)).use { factory ->
                val c = factory.create(f.server.address, 1, 0)
                c.establish()
                c.command("test", OidcFixture.find)["ok"]!!.asNumber().intValue() shouldBe 1
                c.close()
                factory.awaitClosed()
            }
            cb.contexts.single().timeout shouldBe 5.minutes
            f.oidc.authenticatedUsers shouldBe setOf("test_user1")
        }
    }

    test("after a slow human callback, a round trip that stalls is still cut off by connectTimeoutMS (a network timeout)") {
        withFixture { f ->
            val cb = SlowHuman(f, connectTimeoutMS = 1_000)
            f.server.configureFailPoint(
                BsonDocument("configureFailPoint", BsonString("failCommand")).append("mode", BsonDocument("times", BsonInt32(1)))
                    .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("saslContinue")))).append("blockConnection", BsonBoolean(true)).append("blockTimeMS", BsonInt32(60_000))),
            )
            DefaultConnectionFactory(humanConnection(f, 1_000, cb)).use { factory ->
                val c = factory.create(f.server.address, 1, 0)
                val e = shouldThrow<MongoNetworkTimeoutException> { c.establish() }
                e.message!! shouldContain "connectTimeoutMS=1000 ms"
                e.message!! shouldContain "saslContinue"
                e.handshakeCompleted shouldBe false
                c.isClosed shouldBe true
                factory.awaitClosed()
            }
            cb.contexts.size shouldBe 1
            f.oidc.authenticatedUsers shouldBe emptySet()
        }
    }

    test("2.2 human callback returns missing data") {
        withFixture { f ->
            f.cluster(f.settings(human(OidcCallback { OidcCredential("") }))).use { c -> authFailure { c.find() }.message!! shouldContain "MONGODB-OIDC" }
        }
    }

    test("2.3 the refresh token is passed to the callback") {
        withFixture { f ->
            val cb = Human(f)
            f.findAcrossReauthentication(f.settings(human(cb)))
            cb.calls.get() shouldBe 2
            cb.contexts.count { it.refreshToken != null } shouldBe 1
            f.idp.refreshUser(cb.contexts[1].refreshToken) shouldBe "test_user1"
        }
    }

    test("3.1 uses speculative authentication if there is a cached token") {
        withFixture { f ->
            f.cluster(f.settings(human(Human(f)))).use { c ->
                c.find()
                f.failPoint("find", "closeConnection" to true)
                runCatching { c.find() }.isFailure shouldBe true
                f.failPoint("saslStart", "errorCode" to 18)
                c.find()["ok"]!!.asNumber().intValue() shouldBe 1
                f.oidc.speculativeSuccesses shouldBe 1
            }
        }
    }

    test("3.2 does not use speculative authentication if there is no cached token") {
        withFixture { f ->
            f.failPoint("saslStart", "errorCode" to 18)
            f.cluster(f.settings(human(Human(f)))).use { c -> authFailure { c.find() }.serverCode shouldBe 18 }
            f.oidc.speculativeSuccesses shouldBe 0
        }
    }

    test("4.1 reauthentication succeeds: find started twice, failed once, succeeded once") {
        withFixture { f ->
            val cb = Human(f)
            val events = CopyOnWriteArrayList<MooringEvent>()
            f.findAcrossReauthentication(f.settings(human(cb)), events)
            cb.calls.get() shouldBe 2
            // the cluster's close sends endSessions for the implicit session: not part of the operation
            val ops = events.filter { (it as? CommandStartedEvent)?.commandName != "endSessions" && (it as? CommandSucceededEvent)?.commandName != "endSessions" }
            ops.filterIsInstance<CommandStartedEvent>().map { it.commandName } shouldBe listOf("find", "find")
            ops.filterIsInstance<CommandSucceededEvent>().map { it.commandName } shouldBe listOf("find")
            events.filterIsInstance<CommandFailedEvent>().map { it.commandName } shouldBe listOf("find")
        }
    }

    test("4.2 succeeds without a refresh token") {
        withFixture { f ->
            val cb = Human(f, withRefresh = false)
            f.findAcrossReauthentication(f.settings(human(cb)))
            cb.calls.get() shouldBe 2
            cb.contexts.all { it.refreshToken == null } shouldBe true
        }
    }

    test("4.3 succeeds after refresh fails") {
        withFixture { f ->
            val cb = Human(f, badRefresh = true)
            f.findAcrossReauthentication(f.settings(human(cb)))["ok"]!!.asNumber().intValue() shouldBe 1
            cb.calls.get() shouldBe 2
        }
    }

    test("4.4 fails: bad refresh and then bad access tokens, the callback called three times") {
        withFixture { f ->
            val cb = Human(f, badRefresh = true, badAccess = { it > 1 })
            f.cluster(f.settings(human(cb))).use { c ->
                c.find()
                cb.calls.get() shouldBe 1
                f.failPoint("find", "errorCode" to 391)
                authFailure { c.find() }
            }
            cb.calls.get() shouldBe 3
        }
    }
})
