package dev.mooring.integration.tls

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoTlsException
import dev.mooring.cmap.TlsSettings
import dev.mooring.testkit.server.ServerTlsConfig
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import dev.mooring.testkit.tls.TestPki
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.throwables.shouldThrowAny
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.nio.file.Files
import kotlin.time.Duration.Companion.seconds

/** TLS against the test kit's TLS-terminating server, with certificates generated at test time. */
class TlsSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val dir = Files.createTempDirectory("mooring-tls")
    val pki = TestPki(dir)
    val otherPki = TestPki(dir.resolve("other"), "Someone Else's CA")
    val goodServer = pki.issue("localhost", dnsNames = listOf("localhost"), ipAddresses = listOf("127.0.0.1"))
    val wrongHostServer = pki.issue("db.example.com", dnsNames = listOf("db.example.com"))
    val untrustedServer = otherPki.issue("localhost", dnsNames = listOf("localhost"), ipAddresses = listOf("127.0.0.1"))
    val client = pki.issue("app-client", client = true)
    val caFile = pki.writeCaFile().toString()
    val clientKeyFile = pki.writeCertificateKeyFile(client, "client.pem").toString()
    val keyPassword = "k3y-pa55word"
    val encryptedClientKeyFile = pki.writeCertificateKeyFile(client, "client-enc.pem", keyPassword).toString()

    afterSpec { dir.toFile().deleteRecursively() }

    suspend fun <T> withTlsServer(identity: TestPki.Issued, needClientAuth: Boolean = false, block: suspend (WireServer) -> T): T {
        val server = WireServer.start(tls = ServerTlsConfig(pki.sslContext(identity), needClientAuth))
        try {
            return block(server)
        } finally {
            server.close()
        }
    }

    suspend fun ping(server: WireServer, tls: TlsSettings, credential: MongoCredential? = null, compressors: List<String> = emptyList()) {
        DefaultConnectionFactory(
            ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, tls = tls, credential = credential, compressors = compressors),
        ).use { f ->
            val c = f.create(server.address, 1, 0)
            try {
                c.establish()
                c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]?.asNumber()?.intValue() shouldBe 1
            } finally {
                c.close()
            }
        }
    }

    test("a server certificate signed by the tlsCAFile CA connects, with host name verification on") {
        withTlsServer(goodServer) { ping(it, TlsSettings(enabled = true, caFile = caFile)) }
    }

    test("a certificate from an untrusted CA fails with 'certificate not trusted'") {
        withTlsServer(untrustedServer) { server ->
            val e = shouldThrow<MongoTlsException> { ping(server, TlsSettings(enabled = true, caFile = caFile)) }
            e.message!! shouldContain "certificate not trusted"
            e.handshakeCompleted shouldBe false
            e.shouldBeInstanceOf<MongoNetworkException>()
        }
    }

    test("the JVM's default trust store does not trust the test CA") {
        withTlsServer(goodServer) { server ->
            shouldThrow<MongoTlsException> { ping(server, TlsSettings(enabled = true)) }.message!! shouldContain "certificate not trusted"
        }
    }

    test("a certificate for another host name fails with 'host name mismatch'") {
        withTlsServer(wrongHostServer) { server ->
            val e = shouldThrow<MongoTlsException> { ping(server, TlsSettings(enabled = true, caFile = caFile)) }
            e.message!! shouldContain "host name mismatch"
        }
    }

    test("tlsAllowInvalidHostnames accepts the wrong host name but still checks trust") {
        withTlsServer(wrongHostServer) { ping(it, TlsSettings(enabled = true, caFile = caFile, allowInvalidHostnames = true)) }
        withTlsServer(untrustedServer) { server ->
            shouldThrow<MongoTlsException> { ping(server, TlsSettings(enabled = true, caFile = caFile, allowInvalidHostnames = true)) }
        }
    }

    test("tlsAllowInvalidCertificates (as tlsInsecure sets it) accepts an untrusted certificate") {
        withTlsServer(untrustedServer) {
            ping(it, TlsSettings(enabled = true, caFile = caFile, allowInvalidCertificates = true, allowInvalidHostnames = true))
        }
        withTlsServer(wrongHostServer) { ping(it, TlsSettings(enabled = true, allowInvalidCertificates = true)) }
    }

    test("a client certificate from tlsCertificateKeyFile satisfies a server that requires one") {
        withTlsServer(goodServer, needClientAuth = true) { server ->
            ping(server, TlsSettings(enabled = true, caFile = caFile, certificateKeyFile = clientKeyFile))
            ping(server, TlsSettings(enabled = true, caFile = caFile, certificateKeyFile = encryptedClientKeyFile, certificateKeyFilePassword = keyPassword))
            // without a certificate the server refuses the connection
            shouldThrowAny { ping(server, TlsSettings(enabled = true, caFile = caFile)) }.shouldBeInstanceOf<MongoNetworkException>()
            server.counters.tlsHandshakeFailures shouldBe 1
        }
    }

    test("an encrypted key with a wrong or missing password is a clear configuration error that never shows the password") {
        val wrong = "not-the-$keyPassword"
        val e = shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(tls = TlsSettings(true, certificateKeyFile = encryptedClientKeyFile, certificateKeyFilePassword = wrong)))
        }
        e.message!! shouldContain "tlsCertificateKeyFilePassword"
        e.message!! shouldNotContain wrong
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(tls = TlsSettings(true, certificateKeyFile = encryptedClientKeyFile)))
        }.message!! shouldContain "tlsCertificateKeyFilePassword is not set"
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(tls = TlsSettings(true, caFile = dir.resolve("missing.pem").toString())))
        }.message!! shouldContain "missing.pem"
        TlsSettings(true, certificateKeyFilePassword = wrong).toString() shouldNotContain wrong
    }

    test("a user-supplied SSLContext is used, and host names are still verified") {
        val context = pki.sslContext(null)
        withTlsServer(goodServer) { ping(it, TlsSettings(enabled = true, sslContext = context)) }
        withTlsServer(wrongHostServer) { server ->
            shouldThrow<MongoTlsException> { ping(server, TlsSettings(enabled = true, sslContext = context)) }.message!! shouldContain "host name mismatch"
        }
        TlsSettings(enabled = true, sslContext = context).toString() shouldContain "sslContext=<custom>"
    }

    test("SCRAM and compression run over TLS") {
        withTlsServer(goodServer) { server ->
            val scram = ScramServer().also { it.addUser("admin", "alice", "pw-over-tls"); it.install(server) }
            server.compressors = listOf("zstd")
            ping(server, TlsSettings(enabled = true, caFile = caFile), MongoCredential(null, "alice", "admin", "pw-over-tls".toCharArray()), listOf("zstd"))
            scram.successfulAuthentications shouldBe 1
            server.counters.compressedCommandCount("ping") shouldBe 1
        }
    }

    test("large messages cross TLS intact (many TLS records each way), compressed or not") {
        withTlsServer(goodServer) { server ->
            server.compressors = listOf("snappy")
            for (compressors in listOf(emptyList(), listOf("snappy"))) {
                DefaultConnectionFactory(
                    ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, tls = TlsSettings(true, caFile = caFile), compressors = compressors),
                ).use { f ->
                    val c = f.create(server.address, 1, 0).also { it.establish() }
                    val coll = org.bson.BsonString("big${compressors.size}")
                    val random = java.util.Random(42)
                    val docs = (1..4).map { i ->
                        val bytes = ByteArray(1_000_000).also { random.nextBytes(it) }
                        BsonDocument("_id", BsonInt32(i)).append("blob", org.bson.BsonBinary(bytes))
                    }
                    c.command("db", BsonDocument("insert", coll).append("documents", org.bson.BsonArray(docs)))
                    val batch = c.command("db", BsonDocument("find", coll)).getDocument("cursor").getArray("firstBatch")
                    batch.map { it.asDocument() } shouldBe docs
                    c.close()
                }
            }
            server.counters.compressedCommandCount("insert") shouldBe 1
        }
    }

    test("a plain-text client against a TLS server fails with a network error, not a hang") {
        withTlsServer(goodServer) { server ->
            shouldThrowAny {
                DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000)).use { f -> f.create(server.address, 1, 0).establish() }
            }.shouldBeInstanceOf<MongoNetworkException>()
        }
    }
})
