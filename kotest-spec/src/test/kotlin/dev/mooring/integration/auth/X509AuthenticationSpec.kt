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
import dev.mooring.testkit.server.auth.X509AuthServer
import dev.mooring.testkit.tls.TestPki
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.net.URLEncoder
import java.nio.file.Files
import kotlin.time.Duration.Companion.seconds

/** MONGODB-X509 (auth.md) against the test kit's X.509 server, with certificates from the test PKI. */
class X509AuthenticationSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val dir = Files.createTempDirectory("mooring-x509")
    val pki = TestPki(dir)
    val serverIdentity = pki.issue("localhost", dnsNames = listOf("localhost"), ipAddresses = listOf("127.0.0.1"))
    val client = pki.issue("app-client", client = true)
    val stranger = pki.issue("stranger", client = true)
    val caFile = pki.writeCaFile().toString()
    val keyPassword = "x509-k3y-pa55"
    val clientKeyFile = pki.writeCertificateKeyFile(client, "client.pem").toString()
    val encryptedClientKeyFile = pki.writeCertificateKeyFile(client, "client-enc.pem", keyPassword).toString()
    val strangerKeyFile = pki.writeCertificateKeyFile(stranger, "stranger.pem").toString()
    val subject = "CN=app-client"

    afterSpec { dir.toFile().deleteRecursively() }

    class Setup(val server: WireServer, val x509: X509AuthServer)

    suspend fun <T> withServer(block: suspend (Setup) -> T): T {
        val server = WireServer.start(tls = ServerTlsConfig(pki.sslContext(serverIdentity), wantClientAuth = true))
        val x509 = X509AuthServer()
        x509.addUser(subject)
        x509.install(server)
        try {
            return block(Setup(server, x509))
        } finally {
            server.close()
        }
    }

    fun settings(tls: TlsSettings, username: String? = null) = ConnectionSettings(
        connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, tls = tls,
        credential = MongoCredential("MONGODB-X509", username, "\$external", null),
    )

    suspend fun DefaultConnectionFactory.connectAndUse(s: Setup) {
        val c = create(s.server.address, 1, 0)
        try {
            c.establish()
            c.command("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(1))))))
            c.command("db", BsonDocument("find", BsonString("c")))["ok"] shouldBe BsonInt32(1)
        } finally {
            c.close()
        }
    }

    test("X.509 with a PEM certificate and no user name: speculative authentication, the server takes the subject") {
        withServer { s ->
            DefaultConnectionFactory(settings(TlsSettings(true, caFile = caFile, certificateKeyFile = clientKeyFile))).use { it.connectAndUse(s) }
            s.x509.speculativeAuthentications shouldBe 1
            s.server.counters.commandCount("authenticate") shouldBe 0
            s.x509.usersSent shouldBe listOf<String?>(null)
            s.x509.gate.userOf(1) shouldBe subject
        }
    }

    test("X.509 with a user name sends it; with a key store (SSLContext) instead of a PEM file") {
        withServer { s ->
            DefaultConnectionFactory(settings(TlsSettings(true, sslContext = pki.sslContext(client)), username = subject)).use { it.connectAndUse(s) }
            s.x509.usersSent shouldBe listOf<String?>(subject)
            s.x509.gate.successfulAuthentications shouldBe 1
        }
    }

    test("without speculative support the authenticate command runs after the handshake") {
        withServer { s ->
            s.x509.acceptSpeculative = false
            DefaultConnectionFactory(settings(TlsSettings(true, caFile = caFile, certificateKeyFile = clientKeyFile))).use { it.connectAndUse(s) }
            s.server.counters.commandCount("authenticate") shouldBe 1
            s.x509.speculativeAuthentications shouldBe 0
        }
    }

    test("a user name that does not match the certificate, or an unknown subject, is a typed error naming MONGODB-X509") {
        withServer { s ->
            s.x509.acceptSpeculative = false
            DefaultConnectionFactory(settings(TlsSettings(true, caFile = caFile, certificateKeyFile = clientKeyFile), username = "CN=someone-else")).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(s.server.address, 1, 2).establish() }
                e.serverCode shouldBe 18
                e.generation shouldBe 2
                e.message!! shouldContain "MONGODB-X509"
                e.message!! shouldContain "CN=someone-else"
            }
            DefaultConnectionFactory(settings(TlsSettings(true, caFile = caFile, certificateKeyFile = strangerKeyFile))).use { f ->
                shouldThrow<MongoAuthenticationException> { f.create(s.server.address, 1, 0).establish() }.message!! shouldContain "MONGODB-X509"
            }
            s.x509.gate.failedAuthentications shouldBe 2
        }
    }

    test("X.509 without TLS or without a client certificate is refused at construction") {
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(TlsSettings(false))) }.message!! shouldContain "TLS"
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(TlsSettings(true, caFile = caFile))) }
            .message!! shouldContain "client certificate"
    }

    test("the DSL's tls { sslContext } carries the client certificate of a key store") {
        withServer { s ->
            val settings = mongoClusterSettings {
                hosts(s.server.address)
                serverSelectionTimeoutMS = 5_000
                tls { enabled = true; sslContext = pki.sslContext(client) }
                credential(username = null, mechanism = "MONGODB-X509")
            }
            assertSecretsHidden(settings, listOf("changeit")) shouldBe null
            s.x509.gate.successfulAuthentications shouldBe 1
        }
    }

    test("through a cluster: success, then a failure whose events, logs and error never show the key password") {
        withServer { s ->
            fun uri(user: String?) = "mongodb://" + (user?.let { URLEncoder.encode(it, Charsets.UTF_8) + "@" } ?: "") + "${s.server.address}/" +
                "?authMechanism=MONGODB-X509&tls=true&tlsCAFile=$caFile&tlsCertificateKeyFile=$encryptedClientKeyFile" +
                "&tlsCertificateKeyFilePassword=$keyPassword&serverSelectionTimeoutMS=5000&connectTimeoutMS=5000"
            assertSecretsHidden(MongoClusterSettings.fromUri(uri(null)), listOf(keyPassword)) shouldBe null
            val failure = assertSecretsHidden(MongoClusterSettings.fromUri(uri("CN=wrong")), listOf(keyPassword))
            (failure is MongoAuthenticationException) shouldBe true
        }
    }
})
