package dev.mooring.integration.auth

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.internal.auth.AuthHooks
import dev.mooring.cmap.internal.auth.gssapi.GssapiClientFactory
import dev.mooring.cmap.internal.auth.gssapi.GssapiRequest
import dev.mooring.cmap.internal.auth.gssapi.HostLookups
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.GssapiAuthServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.util.concurrent.CopyOnWriteArrayList
import javax.security.sasl.SaslClient
import javax.security.sasl.SaslException
import kotlin.concurrent.thread
import kotlin.time.Duration.Companion.seconds

/**
 * GSSAPI (auth.md) without a KDC: the SASL framing, the mechanism properties reaching the
 * SaslClient, host canonicalization and the errors, with a scripted SaslClient (the internal
 * factory hook) against the test kit's GSSAPI server; and the JDK's real Kerberos client failing
 * against a loopback "KDC" that refuses, as a typed error that hides the password.
 */
class GssapiAuthenticationSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    val rounds = listOf(
        GssapiAuthServer.Round("AP-REQ".toByteArray(), "AP-REP".toByteArray()),
        GssapiAuthServer.Round(ByteArray(0), "wrap(security layer offer)".toByteArray()),
        GssapiAuthServer.Round("wrap(no security layer)".toByteArray(), ByteArray(0)),
    )

    /** Plays the client half of [rounds], recording what the factory was asked for. */
    class ScriptedClients(private val failAt: Int? = null) : GssapiClientFactory {
        val requests = CopyOnWriteArrayList<GssapiRequest>()
        val passwords = CopyOnWriteArrayList<String?>()
        override fun create(request: GssapiRequest): SaslClient {
            requests += request
            passwords += request.password?.let { String(it) }
            return object : SaslClient {
                private var step = 0
                private var done = false
                override fun getMechanismName() = "GSSAPI"
                override fun hasInitialResponse() = true
                override fun evaluateChallenge(challenge: ByteArray): ByteArray {
                    if (step == failAt) throw SaslException("GSS initiate failed: Clock skew too great")
                    val out = when (step) {
                        0 -> "AP-REQ".toByteArray()
                        1 -> ByteArray(0)
                        2 -> {
                            check(String(challenge) == "wrap(security layer offer)") { "unexpected challenge ${String(challenge)}" }
                            done = true
                            "wrap(no security layer)".toByteArray()
                        }
                        else -> error("no more steps")
                    }
                    step++
                    return out
                }
                override fun isComplete() = done
                override fun unwrap(incoming: ByteArray, offset: Int, len: Int) = throw UnsupportedOperationException()
                override fun wrap(outgoing: ByteArray, offset: Int, len: Int) = throw UnsupportedOperationException()
                override fun getNegotiatedProperty(propName: String): Any? = null
                override fun dispose() {}
            }
        }
    }

    class Lookups(private val cname: String) : HostLookups {
        override fun addresses(host: String): List<InetAddress> = listOf(InetAddress.getLoopbackAddress())
        override fun cname(host: String): String? = if (host == "localhost") cname else null
        override fun reverse(address: InetAddress): String = "Reverse.Example.ORG"
    }

    suspend fun <T> withServer(block: suspend (WireServer, GssapiAuthServer) -> T): T {
        val server = WireServer.start()
        val gssapi = GssapiAuthServer("alice@MOORING.TEST", rounds)
        gssapi.install(server)
        try {
            return block(server, gssapi)
        } finally {
            server.close()
        }
    }

    fun settings(props: Map<String, Any> = mapOf("SERVICE_NAME" to "mongodb"), password: String? = null) = ConnectionSettings(
        connectTimeoutMS = 10_000, socketTimeoutMS = 10_000,
        credential = MongoCredential("GSSAPI", "alice@MOORING.TEST", "\$external", password?.toCharArray(), props),
    )

    fun factory(settings: ConnectionSettings, clients: GssapiClientFactory, lookups: HostLookups = Lookups("db.example.com")) =
        DefaultConnectionFactory(settings, emptyList(), null, AuthHooks(gssapiClients = clients, hostLookups = lookups))

    test("the conversation: saslStart with the initial token on \$external, saslContinue until done; the connection is authorized") {
        withServer { server, gssapi ->
            val clients = ScriptedClients()
            factory(settings(), clients).use { f ->
                val c = f.create(server.address, 1, 0)
                c.establish()
                c.command("db", BsonDocument("find", BsonString("c")))["ok"] shouldBe BsonInt32(1)
                c.close()
            }
            gssapi.gate.userOf(1) shouldBe "alice@MOORING.TEST"
            val start = gssapi.commands.first()
            start["saslStart"] shouldBe BsonInt32(1)
            start["mechanism"] shouldBe BsonString("GSSAPI")
            start["autoAuthorize"] shouldBe BsonInt32(1)
            start["\$db"] shouldBe BsonString("\$external")
            (start["payload"] as BsonBinary).data.decodeToString() shouldBe "AP-REQ"
            gssapi.commands.drop(1).map { it.keys.first() } shouldBe listOf("saslContinue", "saslContinue")
            val request = clients.requests.single()
            request.username shouldBe "alice@MOORING.TEST"
            request.serviceName shouldBe "mongodb"
            request.serverName shouldBe "127.0.0.1"
            request.properties["javax.security.sasl.maxbuffer"] shouldBe "0"
        }
    }

    test("SERVICE_NAME, SERVICE_HOST and SERVICE_REALM reach the SaslClient; the password too, when given") {
        withServer { server, _ ->
            val clients = ScriptedClients()
            val props = mapOf("SERVICE_NAME" to "mongo-svc", "SERVICE_HOST" to "db.example.com", "SERVICE_REALM" to "SERVICES.EXAMPLE.COM")
            factory(settings(props, password = "kerb-pa55"), clients).use { it.create(server.address, 1, 0).apply { establish(); close() } }
            val request = clients.requests.single()
            request.serviceName shouldBe "mongo-svc"
            request.serverName shouldBe "db.example.com@SERVICES.EXAMPLE.COM"
            clients.passwords.single() shouldBe "kerb-pa55"
            request.toString().contains("kerb-pa55") shouldBe false
        }
    }

    test("CANONICALIZE_HOST_NAME: forward uses the CNAME, forwardAndReverse the reverse name, none the host as given") {
        withServer { server, _ ->
            val localhost = ServerAddress("localhost", server.port)
            for ((mode, expected) in listOf("forward" to "db.example.com", "forwardAndReverse" to "reverse.example.org", "none" to "localhost", true to "reverse.example.org")) {
                val clients = ScriptedClients()
                factory(settings(mapOf("SERVICE_NAME" to "mongodb", "CANONICALIZE_HOST_NAME" to mode)), clients, Lookups("DB.Example.com")).use {
                    it.create(localhost, 1, 0).apply { establish(); close() }
                }
                clients.requests.single().serverName shouldBe expected
            }
        }
    }

    test("a SaslClient failure and a server refusal are typed errors naming GSSAPI") {
        withServer { server, gssapi ->
            factory(settings(), ScriptedClients(failAt = 2)).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(server.address, 1, 0).establish() }
                e.message!! shouldContain "GSSAPI"
                e.message!! shouldContain "Clock skew"
                e.serverCode shouldBe null
            }
            val wrongToken = GssapiClientFactory { r ->
                val real = ScriptedClients().create(r)
                object : SaslClient by real {
                    override fun evaluateChallenge(challenge: ByteArray) = "forged".toByteArray()
                }
            }
            factory(settings(), wrongToken).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(server.address, 1, 0).establish() }
                e.serverCode shouldBe 18
                e.message!! shouldContain "GSSAPI"
            }
            gssapi.gate.failedAuthentications shouldBe 1
        }
    }

    test("invalid properties are refused at construction") {
        shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(settings(mapOf("CANONICALIZE_HOST_NAME" to "always"))) }
            .message!! shouldContain "CANONICALIZE_HOST_NAME"
    }

    test("the JDK's Kerberos client against a KDC that refuses: a typed error naming GSSAPI; events, logs and errors hide the password") {
        // a loopback "KDC" that closes every connection, and a krb5.conf that sends Kerberos there over TCP only
        val kdc = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
        val acceptor = thread(isDaemon = true) { while (!kdc.isClosed) runCatching { kdc.accept().close() } }
        val conf = Files.createTempFile("mooring-krb5", ".conf")
        Files.writeString(
            conf,
            "[libdefaults]\n default_realm = MOORING.TEST\n kdc_timeout = 2000\n max_retries = 1\n udp_preference_limit = 1\n" +
                " dns_lookup_kdc = false\n dns_lookup_realm = false\n[realms]\n MOORING.TEST = {\n  kdc = 127.0.0.1:${kdc.localPort}\n }\n",
        )
        val previous = System.getProperty("java.security.krb5.conf")
        System.setProperty("java.security.krb5.conf", conf.toString())
        try {
            withServer { server, _ ->
                val secret = "Kerb-Secret-pa55"
                val uri = "mongodb://alice%40MOORING.TEST:$secret@${server.address}/?authMechanism=GSSAPI&serverSelectionTimeoutMS=10000"
                val failure = assertSecretsHidden(MongoClusterSettings.fromUri(uri), listOf(secret))
                (failure is MongoAuthenticationException) shouldBe true
                failure!!.message!! shouldContain "GSSAPI"
                failure.message!! shouldContain "Kerberos"
                server.counters.commandCount("saslStart") shouldBe 0
            }
        } finally {
            if (previous == null) System.clearProperty("java.security.krb5.conf") else System.setProperty("java.security.krb5.conf", previous)
            kdc.close()
            acceptor.join(5_000)
            Files.deleteIfExists(conf)
        }
    }
})
