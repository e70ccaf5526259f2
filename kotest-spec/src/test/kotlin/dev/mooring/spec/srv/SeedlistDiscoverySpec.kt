package dev.mooring.spec.srv

import dev.mooring.events.MooringException
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.DnsLookupException
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.internal.srv.SrvResolution
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import dev.mooring.sdam.uriOptions
import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import dev.mooring.testkit.SpecTests
import dev.mooring.testkit.dns.DnsTestServer
import dev.mooring.testkit.dns.DnsZone
import dev.mooring.testkit.dns.SeedlistSuiteServers
import dev.mooring.testkit.dns.ZoneText
import dev.mooring.testkit.server.ServerTlsConfig
import dev.mooring.testkit.tls.TestPki
import io.kotest.core.spec.style.FunSpec
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.longOrNull
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.xbill.DNS.SRVRecord
import java.io.File
import java.nio.file.Path

/**
 * Runs the initial-dns-seedlist-discovery suite (every `*.json` below its folder: replica-set/,
 * sharded/, load-balanced/) against the test kit's DNS server serving the zone of the suite's
 * README, with the records' targets resolved through that server (127.0.0.1).
 *
 * Each file gives up to two cases. "seedlist and options": the client is built from the URI
 * (an `error` file must fail to build, with a typed error), else the resolved seed list,
 * numSeeds, options and parsed_options are checked. "topology and ping": hosts/numHosts once
 * SDAM has discovered the deployment, and ping; it runs against the test kit's servers on the
 * README's fixed ports (skipped when those are in use). When the client's resolved settings
 * enable TLS (the mongodb+srv default) the servers run TLS with a [TestPki] certificate for the
 * suite's host names, and the client, built from the URI's settings unchanged, trusts the test
 * CA through `tls.sslContext` (host names still verified). A case whose URI turns TLS off
 * (`ssl=false`) gets plain servers, matching what its client asks for.
 */
class SeedlistDiscoverySpec : FunSpec({
    val suite = "initial-dns-seedlist-discovery"
    val zone = DnsZone()
    val readme = File(SpecTests.root, "$suite/README.md")
    val loaded = if (readme.isFile) ZoneText.load(zone, ZoneText.dnsBlocks(readme.readText())) else 0
    val dns = DnsTestServer.start(zone)
    val dnsSettings = DnsResolverSettings(dns.address, timeoutMS = 5_000)
    val pki by lazy { SuitePki() }
    afterSpec { dns.close() }

    test("$suite: the README's zone was loaded") {
        check(loaded > 0) { "no DNS records found in $readme" }
    }

    specSuite(suite) { file, json ->
        val t = SeedlistTestCase.parse(json)
        val kind = file.parentFile.name
        val cases = ArrayList<SpecCase>()
        cases += SpecCase("seedlist and options", zoneDisagreement(t, zone)) {
            if (t.error) {
                expectConstructionError(t, dnsSettings)
            } else {
                checkSeedlist(t, SrvSeedlistDiscovery.resolve(ConnectionString.parse(t.uri), dnsSettings))
            }
        }
        if (!t.error && (t.hosts != null || t.numHosts != null || t.ping)) {
            val ports = when (kind) {
                "replica-set" -> SeedlistSuiteServers.REPLICA_SET_PORTS
                "sharded" -> SeedlistSuiteServers.MONGOS_PORTS
                "load-balanced" -> listOf(SeedlistSuiteServers.LOAD_BALANCER_PORT)
                else -> null
            }
            val busy = ports?.let { SeedlistSuiteServers.busyPorts(it) }.orEmpty()
            val skip = when {
                ports == null -> "unknown deployment folder '$kind': the README defines replica-set, sharded and load-balanced"
                busy.isNotEmpty() -> "the README's fixed ports $busy are in use on this machine, so the test kit cannot host the deployment"
                else -> null
            }
            cases += SpecCase("topology and ping", skip) { runAgainstDeployment(kind, t, dnsSettings, pki) }
        }
        cases
    }
})

/**
 * A reason to skip when the test expects seeds that the README's zone (the fixture this runner
 * serves) does not hold for the queried SRV name: the fixture and the test disagree, so no
 * client could pass. Computed from the zone, never from the client under test.
 */
private fun zoneDisagreement(t: SeedlistTestCase, zone: DnsZone): String? {
    val expected = t.seeds ?: return null
    val cs = runCatching { ConnectionString.parse(t.uri) }.getOrNull() ?: return null
    if (!cs.isSrv) return null
    val name = SrvSeedlistDiscovery.srvName(cs.settings).lowercase()
    val served = zone.records().filterIsInstance<SRVRecord>()
        .filter { it.name.toString(true).lowercase() == name }
        .map { "${it.target.toString(true).lowercase()}:${it.port}" }.toSet()
    val missing = expected.filter { it.lowercase() !in served }
    if (missing.isEmpty()) return null
    return "the README's DNS zone, which the test kit serves, has SRV records $served for $name but the test expects the " +
        "seeds $expected ($missing missing): fixture and test disagree upstream"
}

private fun expectConstructionError(t: SeedlistTestCase, dns: DnsResolverSettings) {
    val cluster = try {
        MongoCluster(t.uri, dns)
    } catch (e: MooringException) {
        check(e is InvalidSettingsException || e is DnsLookupException) { "expected a settings or DNS error, got $e" }
        return
    }
    cluster.close()
    throw AssertionError("building a client for ${t.uri} should have failed (${t.comment})")
}

private fun checkSeedlist(t: SeedlistTestCase, r: SrvResolution) {
    val seeds = r.seeds.map { it.toString() }
    t.seeds?.let { expected ->
        check(seeds.toSet() == expected.toSet()) { "seeds: expected $expected, got $seeds" }
    }
    t.numSeeds?.let { n -> check(seeds.size == n) { "numSeeds: expected $n, got ${seeds.size} ($seeds)" } }
    for ((name, expected) in t.options) {
        val actual = option(r, name)
        check(same(expected, actual)) { "option $name: expected $expected, got $actual" }
    }
    val cred = r.settings.connection.credential
    for ((name, expected) in t.parsedOptions) {
        val actual: Any? = when (name) {
            "user" -> cred?.username
            "password" -> cred?.password?.let { String(it) }
            "db", "auth_database", "defaultDatabase" -> ConnectionString.parse(t.uri).database
            else -> throw AssertionError("parsed option '$name' is not known to this runner")
        }
        check(same(expected, actual)) { "parsed option $name: expected $expected, got $actual" }
    }
}

/** The client's value of URI option [name] (the spec's `ssl` is `tls`). */
private fun option(r: SrvResolution, name: String): Any? {
    val s: MongoClusterSettings = r.settings
    return when (name.lowercase()) {
        "ssl", "tls" -> s.connection.tls.enabled
        "authsource" -> r.authSource
        "replicaset" -> s.replicaSet
        "loadbalanced" -> s.loadBalanced
        "directconnection" -> s.directConnection
        "srvmaxhosts" -> s.srvMaxHosts
        "srvservicename" -> s.srvServiceName
        else -> s.uriOptions().entries.firstOrNull { it.key.equals(name, ignoreCase = true) }?.value
            ?: throw AssertionError("option '$name' is not known to this runner")
    }
}

private fun same(expected: JsonPrimitive, actual: Any?): Boolean = when {
    actual == null -> expected.toString() == "null"
    actual is Boolean -> expected.booleanOrNull == actual
    actual is Number -> expected.longOrNull == actual.toLong()
    else -> expected.content == actual.toString()
}

/** The test CA and a server certificate for every name the suite's clients connect to. */
private class SuitePki {
    private val pki = TestPki(Path.of(System.getProperty("java.io.tmpdir"), "mooring-seedlist-pki"))
    private val server = pki.issue(
        "localhost.test.build.10gen.cc",
        dnsNames = listOf("*.test.build.10gen.cc", "localhost.test.build.10gen.cc", "localhost.sub.test.build.10gen.cc", "localhost"),
        ipAddresses = listOf("127.0.0.1"),
    )
    val serverTls = ServerTlsConfig(pki.sslContext(server))
    val clientContext = pki.sslContext(null)
}

private suspend fun runAgainstDeployment(kind: String, t: SeedlistTestCase, dns: DnsResolverSettings, pki: SuitePki) {
    // The client's settings as the URI (and TXT records) give them; only the trust store is added.
    val uriSettings = SrvSeedlistDiscovery.settingsFromUri(t.uri, dns)
    val tls = uriSettings.connection.tls
    val settings = if (!tls.enabled) uriSettings
    else uriSettings.copy(connection = uriSettings.connection.copy(tls = tls.copy(sslContext = pki.clientContext)))
    val serverTls = if (tls.enabled) pki.serverTls else null
    val servers = when (kind) {
        "replica-set" -> SeedlistSuiteServers.replicaSet(tls = serverTls)
        "sharded" -> SeedlistSuiteServers.mongoses(tls = serverTls)
        else -> SeedlistSuiteServers.loadBalancer(tls = serverTls)
    }
    servers.use {
        val cluster = MongoCluster(settings)
        try {
            if (t.hosts != null || t.numHosts != null) {
                val expected = t.hosts?.toSet()
                withTimeout(20_000) {
                    cluster.topology.first { d ->
                        val known = d.servers.keys.map { it.toString() }.toSet()
                        (expected == null || known == expected) && (t.numHosts == null || known.size == t.numHosts)
                    }
                }
            }
            if (t.ping) {
                val reply = cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
                check(reply.getNumber("ok").intValue() == 1) { "ping failed: $reply" }
            }
        } finally {
            cluster.closeSuspending()
        }
    }
}
