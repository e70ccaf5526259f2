package dev.mooring.sdam.internal.srv

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.DnsLookupException
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random

/** The SRV poller's rules (polling-srv-records-for-mongos-discovery.md) with a scripted lookup and topology. */
class SrvPollerSpec : FunSpec({
    val srvHost = "test1.test.build.10gen.cc"
    val srvName = "_mongodb._tcp.$srvHost"
    fun host(port: Int, name: String = "localhost.test.build.10gen.cc") = ServerAddress(name, port)
    val heartbeat = 10_000L

    class Target(var type: TopologyType = TopologyType.SHARDED) : SrvPollingTarget {
        val applied = ArrayList<List<ServerAddress>>()
        override val current: TopologyDescription
            get() = TopologyDescription(type, mapOf(host(27017) to ServerDescription.unknown(host(27017))))
        override suspend fun onSrvRecords(hosts: List<ServerAddress>, srvMaxHosts: Int, random: Random) {
            applied += hosts
        }
    }

    fun poller(target: Target, min: Long = 60_000, lookup: suspend (String) -> SrvAnswer) =
        SrvPoller(srvHost, srvName, 0, heartbeat, lookup, target, min)

    test("a failed lookup keeps the topology and rescans after heartbeatFrequencyMS (prose: lookup failure, timeout)") {
        val target = Target()
        poller(target) { throw DnsLookupException(it, "SRV", "the name server answered SERVFAIL") }.rescan() shouldBe heartbeat
        target.applied shouldBe emptyList()
    }

    test("no records, or no verified record, keeps the topology (prose: removal of all records)") {
        val target = Target()
        poller(target) { SrvAnswer(emptyList(), null) }.rescan() shouldBe heartbeat
        poller(target) { SrvAnswer(listOf(host(27017, "localhost.evil.build.10gen.cc")), 60) }.rescan() shouldBe heartbeat
        target.applied shouldBe emptyList()
    }

    test("targets outside the SRV name's domain are dropped, the others applied") {
        val target = Target()
        poller(target) { SrvAnswer(listOf(host(27017), host(27018, "localhost.not-test.build.10gen.cc"), host(27019)), 100) }.rescan()
        target.applied shouldBe listOf(listOf(host(27017), host(27019)))
    }

    test("rescanSRVIntervalMS is the lowest TTL, never below the 60 s floor (prose: TTL changes)") {
        val target = Target()
        poller(target) { SrvAnswer(listOf(host(27017)), 300) }.rescan() shouldBe 300_000
        poller(target) { SrvAnswer(listOf(host(27017)), 5) }.rescan() shouldBe 60_000
        poller(target) { SrvAnswer(listOf(host(27017)), null) }.rescan() shouldBe 60_000
    }

    test("the queried name is _{srvServiceName}._tcp.{srvHost}") {
        val asked = CompletableDeferred<String>()
        poller(Target()) { asked.complete(it); SrvAnswer(listOf(host(27017)), 60) }.rescan()
        asked.await() shouldBe srvName
    }

    test("only mongodb+srv clusters that are not load-balanced poll (prose: no polling for load-balanced clusters)") {
        val base = dev.mooring.sdam.MongoClusterSettings(hosts = listOf(host(27017)), srvHost = srvHost)
        SrvPoller.shouldPoll(base) shouldBe true
        SrvPoller.shouldPoll(base.copy(connection = base.connection.copy(loadBalanced = true))) shouldBe false
        SrvPoller.shouldPoll(dev.mooring.sdam.MongoClusterSettings(hosts = listOf(host(27017)))) shouldBe false
    }

    test("polling stops once the topology is neither Sharded nor Unknown") {
        val lookups = AtomicInteger()
        val target = Target(TopologyType.REPLICA_SET_WITH_PRIMARY)
        withTimeout(10_000) { poller(target, min = 1) { lookups.incrementAndGet(); SrvAnswer(listOf(host(27017)), 1) }.run(1) }
        lookups.get() shouldBe 0
    }

    test("a Sharded or Unknown topology keeps being polled until the poller is cancelled") {
        val lookups = AtomicInteger()
        val target = Target(TopologyType.UNKNOWN)
        val enough = CompletableDeferred<Unit>()
        coroutineScope {
            val job = launch {
                poller(target, min = 1) {
                    if (lookups.incrementAndGet() == 2) target.type = TopologyType.SHARDED
                    if (lookups.get() >= 4) enough.complete(Unit)
                    SrvAnswer(listOf(host(27017)), 0)
                }.run(1)
            }
            withTimeout(10_000) { enough.await() }
            job.cancelAndJoin()
        }
        lookups.get() shouldBeGreaterThanOrEqual 4
        target.applied.size shouldBeGreaterThanOrEqual 4
    }
})
