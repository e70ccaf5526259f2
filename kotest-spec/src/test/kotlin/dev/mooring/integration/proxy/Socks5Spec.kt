package dev.mooring.integration.proxy

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoSocks5Exception
import dev.mooring.cmap.ProxySettings
import dev.mooring.cmap.Socks5Failure
import dev.mooring.cmap.TlsSettings
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.integration.auth.LogProbe
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.mongoClusterSettings
import dev.mooring.spec.ProseReport
import dev.mooring.testkit.proxy.Socks5AddressType
import dev.mooring.testkit.proxy.Socks5Proxy
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.ServerTlsConfig
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.tls.TestPki
import io.kotest.assertions.nondeterministic.eventually
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.net.ServerSocket
import java.nio.file.Files
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.seconds
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * socks5.md against the test kit's [Socks5Proxy]: the prose tests of
 * socks5-support/README.md (two proxies, the authenticating one standing in for port 1080 and
 * the open one for 1081, `localhost:12345` mapped to a member, with TLS and without, and each
 * with the proxy given in the URI and through the settings DSL), plus the rules behind them.
 */
class Socks5Spec : FunSpec({
    extension(ProseReport("socks5-support") { it.startsWith("prose:") })
    timeout = 300.seconds.inWholeMilliseconds

    val dir = Files.createTempDirectory("mooring-socks5")
    val pki = TestPki(dir)
    val serverCert = pki.issue("localhost", dnsNames = listOf("localhost"), ipAddresses = listOf("127.0.0.1"))
    val caFile = pki.writeCaFile().toString()

    lateinit var rs: ReplicaSetSimulator
    lateinit var tlsServer: WireServer
    lateinit var authProxy: Socks5Proxy // socks5srv.py --port 1080 --auth username:p4ssw0rd
    lateinit var openProxy: Socks5Proxy // socks5srv.py --port 1081
    lateinit var tlsAuthProxy: Socks5Proxy
    lateinit var tlsOpenProxy: Socks5Proxy

    beforeSpec {
        rs = ReplicaSetSimulator.start(dataMembers = 3)
        tlsServer = WireServer.start(tls = ServerTlsConfig(pki.sslContext(serverCert)))
        val mapped = mapOf("localhost:12345" to ServerAddress.parse(rs.members.first().host))
        val tlsMapped = mapOf("localhost:12345" to tlsServer.address)
        authProxy = Socks5Proxy.start(credentials = "username" to "p4ssw0rd", map = mapped)
        openProxy = Socks5Proxy.start(map = mapped)
        tlsAuthProxy = Socks5Proxy.start(credentials = "username" to "p4ssw0rd", map = tlsMapped)
        tlsOpenProxy = Socks5Proxy.start(map = tlsMapped)
    }

    afterSpec {
        listOf(authProxy, openProxy, tlsAuthProxy, tlsOpenProxy).forEach { it.close() }
        tlsServer.close()
        rs.close()
        dir.toFile().deleteRecursively()
    }

    fun hello() = BsonDocument("hello", BsonInt32(1))

    /** Runs `hello` with a cluster for [uri] (proxy options in the URI, or moved into the DSL when [viaSettings]). */
    suspend fun runHello(uri: String, viaSettings: Boolean, succeeds: Boolean, events: MutableList<MooringEvent>? = null, logs: LogProbe? = null) {
        val timeouts = if (succeeds) "serverSelectionTimeoutMS=30000" else "serverSelectionTimeoutMS=2000"
        val full = "$uri${if ('?' in uri) "&" else "?"}$timeouts&connectTimeoutMS=10000&heartbeatFrequencyMS=500"
        val settings = if (!viaSettings) MongoClusterSettings.fromUri(full) else {
            val (base, query) = full.split('?', limit = 2)
            val params = query.split('&').map { it.substringBefore('=') to it.substringAfter('=') }
            val proxy = params.filter { it.first.startsWith("proxy") }.toMap()
            val rest = params.filterNot { it.first.startsWith("proxy") }.joinToString("&") { "${it.first}=${it.second}" }
            val fromUri = MongoClusterSettings.fromUri("$base?$rest")
            mongoClusterSettings {
                applySettings(fromUri)
                proxy(proxy.getValue("proxyHost"), proxy["proxyPort"]?.toInt() ?: 1080, proxy["proxyUsername"], proxy["proxyPassword"])
            }
        }
        checkNotNull(settings.proxy) { "no proxy in $uri" }
        val cluster = MongoCluster(if (logs == null) settings else settings.copy(logging = logs.settings), listOfNotNull(events?.let { sink -> EventListener { e -> sink += e } }))
        try {
            if (succeeds) {
                cluster.runCommand("admin", hello())["ok"]!!.asNumber().intValue() shouldBe 1
            } else {
                shouldThrow<MongoServerSelectionTimeoutException> { cluster.runCommand("admin", hello()) }
            }
        } finally {
            cluster.closeSuspending()
        }
    }

    data class Row(val hosts: String, val options: String, val succeeds: Boolean)

    // the README's table; "1080" is the authenticating proxy, "1081" the open one
    fun table(): List<Row> {
        val mapped = "localhost:12345"
        val replicaSet = rs.members.joinToString(",") { it.host }
        return listOf(
            Row(mapped, "proxy=1080&directConnection=true", false),
            Row(mapped, "proxy=1081&directConnection=true", true),
            Row(replicaSet, "proxy=1080", false),
            Row(replicaSet, "proxy=1081", true),
            Row(mapped, "proxy=1080&proxyUsername=nonexistentuser&proxyPassword=badauth&directConnection=true", false),
            Row(mapped, "proxy=1081&proxyUsername=nonexistentuser&proxyPassword=badauth&directConnection=true", true),
            Row(replicaSet, "proxy=1081&proxyUsername=nonexistentuser&proxyPassword=badauth", true),
            Row(mapped, "proxy=1080&proxyUsername=username&proxyPassword=p4ssw0rd&directConnection=true", true),
            Row(mapped, "proxy=1081&directConnection=true", true),
            Row(replicaSet, "proxy=1080&proxyUsername=username&proxyPassword=p4ssw0rd", true),
            Row(replicaSet, "proxy=1081", true),
        )
    }

    fun proxyOptions(options: String, auth: Socks5Proxy, open: Socks5Proxy): String =
        options.replace("proxy=1080", "proxyHost=localhost&proxyPort=${auth.port}")
            .replace("proxy=1081", "proxyHost=localhost&proxyPort=${open.port}")

    for (viaSettings in listOf(false, true)) {
        val how = if (viaSettings) "MongoClient options" else "connection string"
        test("prose: the socks5-support table without TLS, proxy in the $how") {
            for ((i, row) in table().withIndex()) {
                val uri = "mongodb://${row.hosts}/?${proxyOptions(row.options, authProxy, openProxy)}"
                withClue(i, uri) { runHello(uri, viaSettings, row.succeeds) }
            }
        }
        test("prose: the socks5-support table with TLS (tls, tlsCAFile) on the mapped host, proxy in the $how") {
            for ((i, row) in table().withIndex().filter { it.value.hosts == "localhost:12345" }) {
                val uri = "mongodb://${row.hosts}/?${proxyOptions(row.options, tlsAuthProxy, tlsOpenProxy)}&tls=true&tlsCAFile=$caFile"
                withClue(i, uri) { runHello(uri, viaSettings, row.succeeds) }
            }
        }
    }

    test("prose: command monitoring events name the server, never the proxy") {
        val events = CopyOnWriteArrayList<MooringEvent>()
        runHello("mongodb://localhost:12345/?proxyHost=localhost&proxyPort=${openProxy.port}&directConnection=true", false, true, events)
        val started = events.filterIsInstance<CommandStartedEvent>()
        started.shouldNotBeEmpty()
        for (e in started) {
            e.address shouldBe ServerAddress("localhost", 12345)
            e.toString() shouldNotContain ":${openProxy.port}"
        }
    }

    test("every connection (monitor and pool) goes through the proxy: the server sees no other") {
        WireServer.start().use { server ->
            Socks5Proxy.start().use { proxy ->
                runHello("mongodb://${server.address}/?proxyHost=127.0.0.1&proxyPort=${proxy.port}&directConnection=true", false, true)
                // the proxy records a CONNECT before it connects to the server, and the server counts a
                // connection when it accepts it, which for a connection closed before its first reply
                // may come after the cluster closed: wait until the two agree
                eventually(10.seconds) { server.counters.connectionsOpened shouldBe proxy.requests.size }
                val requests = proxy.requests
                (requests.size >= 2) shouldBe true // the monitor's and the pool's connection
                requests.forEach { it.port shouldBe server.address.port }
            }
        }
    }

    test("a replica set discovered through the proxy: every member is reached through it") {
        Socks5Proxy.start().use { proxy ->
            runHello(rs.seedUri("proxyHost=localhost&proxyPort=${proxy.port}"), false, true)
            val asked = proxy.requests.map { "${it.host}:${it.port}" }.toSet()
            for (m in rs.members) asked shouldContain m.host
        }
    }

    test("host names go to the proxy unresolved (ATYP domain); IPv4 literals as IPv4") {
        WireServer.start().use { server ->
            Socks5Proxy.start(map = mapOf("db.invalid:27017" to server.address)).use { proxy ->
                pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress("db.invalid", 27017))
                pingVia(ProxySettings("127.0.0.1", proxy.port), server.address)
                val (byName, byIp) = proxy.requests
                byName.addressType shouldBe Socks5AddressType.DOMAIN
                byName.host shouldBe "db.invalid" // a name no resolver knows: only the proxy's map does
                byIp.addressType shouldBe Socks5AddressType.IPV4
                byIp.host shouldBe "127.0.0.1"
                byIp.offeredMethods shouldBe listOf(0) // no credentials: "no authentication" only
            }
        }
    }

    test("IPv6 literals go to the proxy as IPv6 addresses (ATYP 4)") {
        WireServer.start().use { server ->
            Socks5Proxy.start(map = mapOf("0:0:0:0:0:0:0:1:27017" to server.address)).use { proxy ->
                pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress.parse("[::1]:27017"))
                proxy.requests.single().addressType shouldBe Socks5AddressType.IPV6
            }
        }
    }

    test("with credentials the client offers no-auth and username/password, and authenticates") {
        WireServer.start().use { server ->
            Socks5Proxy.start(credentials = "u1" to "pw-S3cret").use { proxy ->
                pingVia(ProxySettings("localhost", proxy.port, "u1", "pw-S3cret"), server.address)
                val r = proxy.requests.single()
                r.offeredMethods shouldBe listOf(0, 2)
                r.username shouldBe "u1"
            }
        }
    }

    test("negative: a proxy that requires authentication, no credentials: NO_ACCEPTABLE_METHOD") {
        Socks5Proxy.start(credentials = "u" to "p").use { proxy ->
            val e = shouldThrow<MongoSocks5Exception> { pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress("db.invalid", 27017)) }
            e.failure shouldBe Socks5Failure.NO_ACCEPTABLE_METHOD
            e.proxy shouldBe "127.0.0.1:${proxy.port}"
            e.message!! shouldContain "127.0.0.1:${proxy.port}"
            e.shouldBeInstanceOf<MongoNetworkException>()
            e.handshakeCompleted shouldBe false
        }
    }

    test("negative: wrong credentials: AUTHENTICATION_FAILED naming the proxy and user, never the password") {
        Socks5Proxy.start(credentials = "u" to "right").use { proxy ->
            val settings = ProxySettings("127.0.0.1", proxy.port, "u", "wr0ngPassw0rd")
            val e = shouldThrow<MongoSocks5Exception> { pingVia(settings, ServerAddress("db.invalid", 27017)) }
            e.failure shouldBe Socks5Failure.AUTHENTICATION_FAILED
            e.message!! shouldContain "127.0.0.1:${proxy.port}"
            e.message!! shouldContain "'u'"
            e.stackTraceToString() shouldNotContain "wr0ngPassw0rd"
            settings.toString() shouldNotContain "wr0ngPassw0rd"
            proxy.rejectedHandshakes shouldBe 1
            proxy.requests shouldBe emptyList()
        }
    }

    test("negative: the proxy cannot reach the server: CONNECT_FAILED with the reply code") {
        Socks5Proxy.start().use { proxy ->
            val closedPort = ServerSocket(0).use { it.localPort }
            val e = shouldThrow<MongoSocks5Exception> { pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress("127.0.0.1", closedPort)) }
            e.failure shouldBe Socks5Failure.CONNECT_FAILED
            e.replyCode shouldBe 5
            e.message!! shouldContain "connection refused"
            e.address shouldBe ServerAddress("127.0.0.1", closedPort)
            for (code in 1..8) {
                proxy.forcedReply = code
                shouldThrow<MongoSocks5Exception> { pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress("db.invalid", 1)) }.replyCode shouldBe code
            }
        }
    }

    test("negative: no proxy listening: PROXY_UNREACHABLE, and the server is never contacted directly") {
        WireServer.start().use { server ->
            val closedPort = ServerSocket(0).use { it.localPort }
            val e = shouldThrow<MongoSocks5Exception> { pingVia(ProxySettings("127.0.0.1", closedPort, "u", "s3cretPw"), server.address) }
            e.failure shouldBe Socks5Failure.PROXY_UNREACHABLE
            e.message!! shouldContain "127.0.0.1:$closedPort"
            e.message!! shouldNotContain "s3cretPw"
            server.counters.connectionsOpened shouldBe 0
        }
    }

    test("negative: a cluster whose proxy refuses records the typed error; the password is in no event or log message") {
        Socks5Proxy.start(credentials = "u" to "p").use { proxy ->
            val events = CopyOnWriteArrayList<MooringEvent>()
            val logs = LogProbe()
            runHello("mongodb://localhost:12345/?proxyHost=127.0.0.1&proxyPort=${proxy.port}&proxyUsername=u&proxyPassword=Wr0ngPw&directConnection=true", false, false, events, logs)
            logs.sawMessages shouldBe true
            logs.text shouldNotContain "Wr0ngPw"
            val failures = events.filterIsInstance<ServerHeartbeatFailedEvent>().map { it.failure }
            failures.shouldNotBeEmpty()
            failures.first().shouldBeInstanceOf<MongoSocks5Exception>().failure shouldBe Socks5Failure.AUTHENTICATION_FAILED
            events.filterIsInstance<ServerDescriptionChangedEvent>().mapNotNull { it.newDescription.error }.last() shouldContain "SOCKS5 proxy"
            for (e in events) e.toString() shouldNotContain "Wr0ngPw"
        }
    }

    test("TLS runs on top of the proxied stream and verifies the server's name, not the proxy's") {
        Socks5Proxy.start(map = mapOf("localhost:12345" to tlsServer.address)).use { proxy ->
            pingVia(ProxySettings("127.0.0.1", proxy.port), ServerAddress("localhost", 12345), TlsSettings(enabled = true, caFile = caFile))
            proxy.requests.single().host shouldBe "localhost"
        }
    }
})

private suspend fun pingVia(proxy: ProxySettings, target: ServerAddress, tls: TlsSettings = TlsSettings()) {
    DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, tls = tls, proxy = proxy)).use { f ->
        val c = f.create(target, 1, 0)
        try {
            c.establish()
            c.command("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().intValue() shouldBe 1
        } finally {
            c.close()
            f.awaitClosed()
        }
    }
}

private suspend fun withClue(index: Int, uri: String, block: suspend () -> Unit) =
    io.kotest.assertions.withClue("row ${index + 1}: $uri") { block() }
