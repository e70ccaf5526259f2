package dev.mooring.sdam.internal.srv

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyAction
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologyType
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlin.random.Random

/** The topology step of an SRV rescan: polling-srv-records-for-mongos-discovery.md's rules and the prose tests' record changes. */
class SrvRecordsUpdateSpec : FunSpec({
    fun host(port: Int) = ServerAddress("localhost.test.build.10gen.cc", port)
    fun mongos(port: Int) = ServerDescription(address = host(port), type = ServerType.MONGOS)
    fun sharded(vararg ports: Int) = TopologyDescription(TopologyType.SHARDED, ports.associate { host(it) to mongos(it) })
    val rnd = Random(42)

    test("a new record is added as Unknown; the others are left unchanged (prose: addition)") {
        val current = sharded(27017, 27018)
        val u = SrvRecordsUpdate.apply(current, listOf(host(27017), host(27018), host(27019)), 0, rnd)
        u.ignored shouldBe false
        u.description.servers.keys shouldContainExactlyInAnyOrder listOf(host(27017), host(27018), host(27019))
        u.description.servers[host(27019)]!!.type shouldBe ServerType.UNKNOWN
        u.description.servers[host(27017)] shouldBe current.servers[host(27017)]
        u.description.type shouldBe TopologyType.SHARDED
        u.actions shouldBe listOf(TopologyAction.StartMonitoring(host(27019)))
        u.events(TopologyId.next(), 0).filterIsInstance<ServerOpeningEvent>().map { it.address } shouldBe listOf(host(27019))
    }

    test("a record that disappeared is removed (prose: removal)") {
        val u = SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27017)), 0, rnd)
        u.description.servers.keys shouldBe setOf(host(27017))
        u.actions shouldBe listOf(TopologyAction.StopMonitoring(host(27018)))
        u.events(TopologyId.next(), 0).filterIsInstance<ServerClosedEvent>().map { it.address } shouldBe listOf(host(27018))
    }

    test("a replaced record: one removed, one added (prose: replacement)") {
        val u = SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27017), host(27019)), 0, rnd)
        u.description.servers.keys shouldContainExactlyInAnyOrder listOf(host(27017), host(27019))
        u.actions shouldContainExactlyInAnyOrder listOf(TopologyAction.StopMonitoring(host(27018)), TopologyAction.StartMonitoring(host(27019)))
    }

    test("both records replaced by one new record, and by two new records") {
        SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27019)), 0, rnd).description.servers.keys shouldBe setOf(host(27019))
        SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27019), host(27020)), 0, rnd)
            .description.servers.keys shouldContainExactlyInAnyOrder listOf(host(27019), host(27020))
    }

    test("an empty answer or the same records change nothing") {
        val current = sharded(27017, 27018)
        SrvRecordsUpdate.apply(current, emptyList(), 0, rnd).ignored shouldBe true
        val same = SrvRecordsUpdate.apply(current, listOf(host(27018), host(27017)), 0, rnd)
        same.ignored shouldBe true
        same.events(TopologyId.next(), 0) shouldBe emptyList()
    }

    test("only Sharded and Unknown topologies are changed") {
        val rs = TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(host(27017) to ServerDescription(address = host(27017), type = ServerType.RS_PRIMARY)), setName = "rs")
        SrvRecordsUpdate.apply(rs, listOf(host(27018)), 0, rnd).ignored shouldBe true
        val single = TopologyDescription(TopologyType.SINGLE, mapOf(host(27017) to ServerDescription.unknown(host(27017))))
        SrvRecordsUpdate.apply(single, listOf(host(27018)), 0, rnd).ignored shouldBe true
        val unknown = TopologyDescription(TopologyType.UNKNOWN, mapOf(host(27017) to ServerDescription.unknown(host(27017))))
        SrvRecordsUpdate.apply(unknown, listOf(host(27018)), 0, rnd).description.servers.keys shouldBe setOf(host(27018))
    }

    test("srvMaxHosts 0, or at least the number of records, adds every new record") {
        val all = listOf(host(27017), host(27018), host(27019), host(27020))
        SrvRecordsUpdate.apply(sharded(27017, 27018), all, 0, rnd).description.servers.size shouldBe 4
        SrvRecordsUpdate.apply(sharded(27017, 27018), all, 4, rnd).description.servers.size shouldBe 4
        SrvRecordsUpdate.apply(sharded(27017, 27018), all, 9, rnd).description.servers.size shouldBe 4
    }

    test("srvMaxHosts below the number of records: kept hosts stay, new ones are drawn at random up to srvMaxHosts") {
        val drawn = HashSet<ServerAddress>()
        repeat(40) { seed ->
            // 27018 disappeared; 27017 stays; one of 27019/27020 fills the second slot.
            val u = SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27017), host(27019), host(27020)), 2, Random(seed))
            val keys = u.description.servers.keys
            keys.size shouldBe 2
            keys shouldContain host(27017)
            drawn += keys - host(27017)
        }
        drawn shouldBe setOf(host(27019), host(27020))
        // Already at srvMaxHosts with every current host still valid: nothing is added.
        SrvRecordsUpdate.apply(sharded(27017, 27018), listOf(host(27017), host(27018), host(27019)), 2, rnd).ignored shouldBe true
    }
})
