package dev.mooring.srv

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.DnsLookupException
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.internal.srv.SrvPollingInternals
import dev.mooring.sdam.internal.srv.SrvSeedlistDiscovery
import dev.mooring.testkit.dns.DnsTestServer
import dev.mooring.testkit.dns.DnsZone
import dev.mooring.testkit.dns.SeedlistSuiteServers
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.collections.shouldBeIn
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.xbill.DNS.Rcode
import org.xbill.DNS.Type

private const val DOMAIN = "test.build.10gen.cc"
private const val TARGET = "localhost.$DOMAIN"

/**
 * `mongodb+srv` end to end: the test kit's DNS server on loopback serves the records, the
 * client resolves the SRV targets' names through it, and test-kit servers answer. Covers the
 * seedlist prose tests for invalid resolution results, typed DNS errors, and the SRV polling
 * prose tests (records added, removed, replaced, lookup failures and timeouts, all records
 * removed, srvMaxHosts, srvServiceName) with a fast poller (the spec's 60 s floor lifted through
 * SrvPollingInternals).
 */
class SrvClusterSpec : FunSpec({
    val zone = DnsZone()
    val dns = DnsTestServer.start(zone)
    val resolver = DnsResolverSettings(dns.address, timeoutMS = 1_000)
    afterSpec { dns.close() }
    beforeTest {
        zone.failWith(null)
        zone.dropQueries(false)
        zone.records().map { it.name.toString() }.distinct().forEach { zone.remove(it) }
        zone.addA(TARGET, "127.0.0.1")
    }

    fun hosts(d: TopologyDescription) = d.servers.keys.map { it.port }.toSet()
    suspend fun MongoCluster.awaitPorts(ports: Set<Int>) = withTimeout(20_000) { topology.first { hosts(it) == ports } }
    val ping = BsonDocument("ping", BsonInt32(1))

    test("a mongodb+srv URI finds a replica set: TXT replicaSet, targets resolved through the DNS server, ping") {
        ReplicaSetSimulator.start().use { rs ->
            rs.members.forEach { zone.addSrv("_mongodb._tcp.rs.$DOMAIN", TARGET, it.port) }
            zone.addTxt("rs.$DOMAIN", "replicaSet=${rs.setName}")
            val cluster = MongoCluster("mongodb+srv://rs.$DOMAIN/?tls=false&heartbeatFrequencyMS=500", resolver)
            try {
                cluster.settings.replicaSet shouldBe rs.setName
                cluster.settings.hosts.map { it.host }.toSet() shouldBe setOf(TARGET)
                cluster.runCommand("admin", ping).getNumber("ok").intValue() shouldBe 1
                // The members call themselves 127.0.0.1:<port>: SDAM replaces the SRV names with them.
                val d = withTimeout(20_000) { cluster.topology.first { d -> d.type == TopologyType.REPLICA_SET_WITH_PRIMARY && d.servers.keys.all { it.host == "127.0.0.1" } } }
                d.servers.keys shouldBe rs.members.map { it.address }.toSet()
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    context("prose tests: invalid resolution results are errors naming the bad target") {
        val cases = listOf(
            "localhost" to "localhost.mongodb",
            "mongo.local" to "test_1.evil.local",
            "blogs.mongodb.com" to "blogs.evil.com",
            "localhost" to "localhost",
            "mongo.local" to "mongo.local",
            "localhost" to "test_1.cluster_1localhost",
            "mongo.local" to "test_1.my_hostmongo.local",
            "blogs.mongodb.com" to "cluster.testmongodb.com",
        )
        for ((srv, target) in cases) {
            test("$srv resolving to $target") {
                zone.addSrv("_mongodb._tcp.$srv", target, 27017)
                val e = shouldThrow<InvalidConnectionStringException> { MongoCluster("mongodb+srv://$srv/?tls=false", resolver) }
                e.message!! shouldContain target
            }
        }
        test("SRV names with fewer than three labels are accepted when the target shares them") {
            SeedlistSuiteServers.mongoses(listOf(0)).use { m ->
                zone.addSrv("_mongodb._tcp.mongo.local", "db1.mongo.local", m.servers[0].port)
                zone.addA("db1.mongo.local", "127.0.0.1")
                val cluster = MongoCluster("mongodb+srv://mongo.local/?tls=false", resolver)
                try {
                    cluster.settings.hosts shouldBe listOf(ServerAddress("db1.mongo.local", m.servers[0].port))
                    cluster.runCommand("admin", ping).getNumber("ok").intValue() shouldBe 1
                } finally {
                    cluster.closeSuspending()
                }
            }
        }
    }

    context("DNS failures are typed errors naming the record") {
        test("SERVFAIL") {
            zone.failWith(Rcode.SERVFAIL)
            val e = shouldThrow<DnsLookupException> { MongoCluster("mongodb+srv://test1.$DOMAIN/?tls=false", resolver) }
            val expectedName = if (e.recordType == "SRV") "_mongodb._tcp.test1.$DOMAIN" else "test1.$DOMAIN"
            e.recordName shouldBe expectedName
            e.message!! shouldContain "SERVFAIL"
        }
        test("no answer within the timeout") {
            zone.dropQueries(true)
            val e = shouldThrow<DnsLookupException> { MongoCluster("mongodb+srv://test1.$DOMAIN/?tls=false", resolver) }
            e.recordName shouldContain "test1.$DOMAIN"
        }
        test("no SRV records") {
            val e = shouldThrow<InvalidConnectionStringException> { MongoCluster("mongodb+srv://test4.$DOMAIN/?tls=false", resolver) }
            e.message!! shouldContain "_mongodb._tcp.test4.$DOMAIN"
        }
    }

    test("the test DNS server answers long records over TCP after a truncated UDP answer") {
        val parts = listOf("replicaSet=") + List(8) { "r".repeat(255) }
        zone.addSrv("_mongodb._tcp.big.$DOMAIN", TARGET, 27017)
        zone.addTxt("big.$DOMAIN", *parts.toTypedArray())
        val r = SrvSeedlistDiscovery.resolve(ConnectionString.parse("mongodb+srv://big.$DOMAIN/?tls=false"), resolver)
        r.settings.replicaSet shouldBe "r".repeat(8 * 255)
        dns.queryCount("big.$DOMAIN", "TXT") shouldBeGreaterThanOrEqual 2 // over UDP (truncated), then over TCP
    }

    context("SRV polling prose tests (mongos behind test1.$DOMAIN)") {
        suspend fun withMongoses(n: Int, block: suspend (List<Int>) -> Unit) =
            SeedlistSuiteServers.mongoses(List(n) { 0 }).use { m -> block(m.servers.map { it.port }) }

        suspend fun polling(uri: String, block: suspend (MongoCluster) -> Unit) {
            val cluster = MongoCluster(uri, resolver)
            val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
            try {
                SrvPollingInternals.launchPoller(cluster, scope, minRescanIntervalMS = 50, firstIntervalMS = 50)
                block(cluster)
            } finally {
                scope.coroutineContext[kotlinx.coroutines.Job]!!.cancelAndJoin()
                cluster.closeSuspending()
            }
        }

        suspend fun rescansOf(name: String, atLeast: Int) {
            val start = dns.queryCount(name, "SRV")
            withTimeout(20_000) { while (dns.queryCount(name, "SRV") < start + atLeast) delay(20) }
        }

        val srvName = "_mongodb._tcp.test1.$DOMAIN"
        val uri = "mongodb+srv://test1.$DOMAIN/?tls=false&heartbeatFrequencyMS=500"

        test("addition, removal, replacement of records") {
            withMongoses(4) { p ->
                zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                polling(uri) { c ->
                    c.awaitPorts(setOf(p[0], p[1]))
                    withTimeout(20_000) { c.topology.first { it.type == TopologyType.SHARDED } }
                    zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1], TARGET to p[2]), ttl = 0)
                    c.awaitPorts(setOf(p[0], p[1], p[2]))
                    zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[2]), ttl = 0)
                    c.awaitPorts(setOf(p[0], p[2]))
                    zone.replaceSrv(srvName, listOf(TARGET to p[3]), ttl = 0)
                    c.awaitPorts(setOf(p[3]))
                    zone.replaceSrv(srvName, listOf(TARGET to p[1], TARGET to p[2]), ttl = 0)
                    c.awaitPorts(setOf(p[1], p[2]))
                    c.runCommand("admin", ping).getNumber("ok").intValue() shouldBe 1
                }
            }
        }

        test("lookup failures, timeouts and the removal of all records keep the current hosts") {
            withMongoses(2) { p ->
                zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                polling(uri) { c ->
                    c.awaitPorts(setOf(p[0], p[1]))
                    zone.failWith(Rcode.SERVFAIL)
                    rescansOf(srvName, 2)
                    hosts(c.topology.value) shouldBe setOf(p[0], p[1])
                    zone.failWith(null)
                    zone.dropQueries(true)
                    rescansOf(srvName, 2)
                    hosts(c.topology.value) shouldBe setOf(p[0], p[1])
                    zone.dropQueries(false)
                    zone.remove(srvName, Type.SRV)
                    rescansOf(srvName, 2)
                    hosts(c.topology.value) shouldBe setOf(p[0], p[1])
                    zone.replaceSrv(srvName, listOf(TARGET to p[1]), ttl = 0)
                    c.awaitPorts(setOf(p[1]))
                }
            }
        }

        test("srvMaxHosts: new records are drawn at random until the topology has srvMaxHosts hosts") {
            withMongoses(4) { p ->
                zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                polling("$uri&srvMaxHosts=2") { c ->
                    c.awaitPorts(setOf(p[0], p[1]))
                    // p[1] disappears, p[2] and p[3] appear: p[0] stays and one of the new ones joins.
                    zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[2], TARGET to p[3]), ttl = 0)
                    val d = withTimeout(20_000) { c.topology.first { p[1] !in hosts(it) } }
                    hosts(d).size shouldBe 2
                    (p[0] in hosts(d)) shouldBe true
                    (hosts(d) - p[0]).single() shouldBeIn listOf(p[2], p[3])
                }
            }
        }

        test("srvMaxHosts 0 and srvMaxHosts above the number of records select every record") {
            withMongoses(3) { p ->
                zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                for (opt in listOf("srvMaxHosts=0", "srvMaxHosts=5")) {
                    zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                    polling("$uri&$opt") { c ->
                        c.awaitPorts(setOf(p[0], p[1]))
                        zone.replaceSrv(srvName, listOf(TARGET to p[0], TARGET to p[1], TARGET to p[2]), ttl = 0)
                        c.awaitPorts(setOf(p[0], p[1], p[2]))
                    }
                }
            }
        }

        test("a custom srvServiceName is used for rescans") {
            withMongoses(2) { p ->
                val custom = "_customname._tcp.test22.$DOMAIN"
                zone.replaceSrv(custom, listOf(TARGET to p[0]), ttl = 0)
                polling("mongodb+srv://test22.$DOMAIN/?tls=false&srvServiceName=customname&heartbeatFrequencyMS=500") { c ->
                    c.awaitPorts(setOf(p[0]))
                    zone.replaceSrv(custom, listOf(TARGET to p[0], TARGET to p[1]), ttl = 0)
                    c.awaitPorts(setOf(p[0], p[1]))
                    dns.queryCount("_mongodb._tcp.test22.$DOMAIN", "SRV") shouldBe 0
                }
            }
        }

        test("polling stops once the topology is a replica set") {
            ReplicaSetSimulator.start().use { rs ->
                zone.replaceSrv(srvName, rs.members.map { TARGET to it.port }, ttl = 0)
                val cluster = MongoCluster("$uri&replicaSet=${rs.setName}", resolver)
                val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
                try {
                    val poller = SrvPollingInternals.launchPoller(cluster, scope, minRescanIntervalMS = 50, firstIntervalMS = 50)
                    withTimeout(20_000) { cluster.topology.first { it.type == TopologyType.REPLICA_SET_WITH_PRIMARY } }
                    // The poller ends by itself: a replica set never becomes Sharded again.
                    withTimeout(20_000) { poller.join() }
                    poller.isCancelled shouldBe false
                } finally {
                    scope.coroutineContext[kotlinx.coroutines.Job]!!.cancelAndJoin()
                    cluster.closeSuspending()
                }
            }
        }
    }
})
