package dev.mooring.integration.auth

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.TlsSettings
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.mongoClusterSettings
import dev.mooring.testkit.server.ServerTlsConfig
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.PlainAuthServer
import dev.mooring.testkit.tls.TestPki
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.nio.file.Files
import kotlin.time.Duration.Companion.seconds

/** SASL PLAIN (auth.md, RFC 4616) against the test kit's PLAIN server, over TLS and (when allowed) without. */
class PlainAuthenticationSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val dir = Files.createTempDirectory("mooring-plain")
    val pki = TestPki(dir)
    val serverIdentity = pki.issue("localhost", dnsNames = listOf("localhost"), ipAddresses = listOf("127.0.0.1"))
    val caFile = pki.writeCaFile().toString()
    val password = "ld@p-Pa55word-\u00e9"

    afterSpec { dir.toFile().deleteRecursively() }

    suspend fun <T> withServer(tls: Boolean, block: suspend (WireServer, PlainAuthServer) -> T): T {
        val server = WireServer.start(tls = if (tls) ServerTlsConfig(pki.sslContext(serverIdentity)) else null)
        val plain = PlainAuthServer()
        plain.addUser("ldap-user", password)
        plain.install(server)
        try {
            return block(server, plain)
        } finally {
            server.close()
        }
    }

    fun settings(tls: Boolean, pw: String = password, allowWithoutTls: Boolean = false) = ConnectionSettings(
        connectTimeoutMS = 10_000, socketTimeoutMS = 10_000,
        tls = if (tls) TlsSettings(true, caFile = caFile) else TlsSettings(),
        credential = MongoCredential("PLAIN", "ldap-user", "\$external", pw.toCharArray()),
        allowPlainAuthWithoutTls = allowWithoutTls,
    )

    test("PLAIN over TLS authenticates and the connection is authorized") {
        withServer(tls = true) { server, plain ->
            DefaultConnectionFactory(settings(tls = true)).use { f ->
                val c = f.create(server.address, 1, 0)
                c.establish()
                c.command("db", BsonDocument("find", BsonString("c")))["ok"] shouldBe BsonInt32(1)
                c.close()
            }
            plain.attemptsOverTls shouldBe listOf(true)
            plain.gate.userOf(1) shouldBe "ldap-user"
            server.counters.commandCount("saslContinue") shouldBe 0
        }
    }

    test("PLAIN without TLS is refused at construction unless allowPlainAuthWithoutTls is set, and never reaches the server") {
        withServer(tls = false) { server, plain ->
            val e = shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(tls = false)) }
            e.message!! shouldContain "allowPlainAuthWithoutTls"
            e.message!! shouldContain "PLAIN"
            plain.attemptsOverTls shouldBe emptyList()
            DefaultConnectionFactory(settings(tls = false, allowWithoutTls = true)).use { f ->
                f.create(server.address, 1, 0).apply { establish(); close() }
            }
            plain.attemptsOverTls shouldBe listOf(false)
        }
    }

    test("the option reaches the factory from the Kotlin DSL (and is off by default)") {
        mongoClusterSettings { }.connection.allowPlainAuthWithoutTls shouldBe false
        mongoClusterSettings { connection { allowPlainAuthWithoutTls = true } }.connection.allowPlainAuthWithoutTls shouldBe true
    }

    test("a wrong password is a typed error naming PLAIN and the user, never the password") {
        withServer(tls = true) { server, plain ->
            val wrong = "wrong-$password"
            DefaultConnectionFactory(settings(tls = true, pw = wrong)).use { f ->
                val c = f.create(server.address, 4, 1)
                val e = shouldThrow<MongoAuthenticationException> { c.establish() }
                e.serverCode shouldBe 18
                e.generation shouldBe 1
                e.message!! shouldContain "PLAIN"
                e.message!! shouldContain "ldap-user"
                c.isClosed shouldBe true
            }
            plain.gate.failedAuthentications shouldBe 1
        }
    }

    test("through a cluster: events, logs, errors and toString never show the password (success and failure)") {
        withServer(tls = true) { server, _ ->
            fun uri(pw: String) = "mongodb://ldap-user:${java.net.URLEncoder.encode(pw, Charsets.UTF_8)}@${server.address}/" +
                "?authMechanism=PLAIN&authSource=\$external&tls=true&tlsCAFile=$caFile&serverSelectionTimeoutMS=5000"
            assertSecretsHidden(MongoClusterSettings.fromUri(uri(password)), listOf(password)) shouldBe null
            val wrong = "Wr0ng-$password"
            (assertSecretsHidden(MongoClusterSettings.fromUri(uri(wrong)), listOf(wrong, password)) is MongoAuthenticationException) shouldBe true
        }
    }
})
