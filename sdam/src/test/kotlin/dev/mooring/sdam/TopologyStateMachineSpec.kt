package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonDocument
import org.bson.types.ObjectId

class TopologyStateMachineSpec : FunSpec({
    val a = ServerAddress("a")
    val b = ServerAddress("b")
    val c = ServerAddress("c")
    val id = TopologyId("t")
    val rs = TopologySettings(listOf(a, b), replicaSetName = "rs")

    fun hello(addr: ServerAddress, json: String) = ServerDescription.fromHello(addr, BsonDocument.parse(json))
    fun primary(addr: ServerAddress, hosts: String, extra: String = "") =
        hello(addr, "{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: [$hosts], maxWireVersion: 21 $extra}")

    test("opening starts monitoring every seed and publishes opening events in the spec's order") {
        val u = TopologyStateMachine.open(rs)
        u.description.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
        u.description.setName shouldBe "rs"
        u.actions shouldContainExactly listOf(TopologyAction.StartMonitoring(a), TopologyAction.StartMonitoring(b))
        val events = u.events(id, 1)
        events.map { it::class } shouldContainExactly listOf(
            TopologyOpeningEvent::class, TopologyDescriptionChangedEvent::class, ServerOpeningEvent::class, ServerOpeningEvent::class,
        )
        (events[1] as TopologyDescriptionChangedEvent).previousDescription shouldBe TopologyDescription.EMPTY
    }

    test("a primary marks its pool ready first, adds members, and an old primary is invalidated with an immediate check but no pool clear") {
        var td = TopologyStateMachine.open(rs).description
        td = TopologyStateMachine.onServerDescription(td, primary(a, "'a:27017', 'b:27017'", ", electionId: {\$oid: '000000000000000000000001'}"), rs).description
        td.type shouldBe TopologyType.REPLICA_SET_WITH_PRIMARY
        val u = TopologyStateMachine.onServerDescription(
            td,
            primary(b, "'a:27017', 'b:27017', 'c:27017'", ", electionId: {\$oid: '000000000000000000000002'}"),
            rs,
        )
        u.actions shouldContainExactly listOf(
            TopologyAction.MarkPoolReady(b),
            TopologyAction.StartMonitoring(c),
            TopologyAction.RequestImmediateCheck(a),
        )
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.description.servers.getValue(a).error!! shouldContain "discovery of newer primary"
        u.description.maxElectionId shouldBe ObjectId("000000000000000000000002")
        val kinds = u.events(id, 2).map { it::class }
        // Only the checked server's description change is a ServerDescriptionChanged; a's reset shows in the topology change.
        kinds shouldContainExactly listOf(ServerDescriptionChangedEvent::class, TopologyDescriptionChangedEvent::class, ServerOpeningEvent::class)
    }

    test("a primary that does not list a member removes it and stops its monitor") {
        val td = TopologyStateMachine.open(rs).description
        val u = TopologyStateMachine.onServerDescription(td, primary(a, "'a:27017'"), rs)
        u.removedServers shouldBe setOf(b)
        u.actions shouldContainExactly listOf(TopologyAction.MarkPoolReady(a), TopologyAction.StopMonitoring(b))
        u.events(id, 1).filterIsInstance<ServerClosedEvent>().map { it.address } shouldBe listOf(b)
    }

    test("a member that reports new hosts: they are announced after the topology change, the reported primary becomes PossiblePrimary") {
        val one = TopologySettings(listOf(a), replicaSetName = "rs")
        val td = TopologyStateMachine.open(one).description
        val other = hello(a, "{ok: 1, isWritablePrimary: false, hidden: true, setName: 'rs', primary: 'b:27017', hosts: ['b:27017'], maxWireVersion: 21}")
        val u = TopologyStateMachine.onServerDescription(td, other, one)
        u.description.servers.getValue(b).type shouldBe ServerType.POSSIBLE_PRIMARY
        u.actions shouldContainExactly listOf(TopologyAction.StartMonitoring(b))
        u.events(id, 1).map { it::class } shouldContainExactly listOf(
            ServerDescriptionChangedEvent::class, TopologyDescriptionChangedEvent::class, ServerOpeningEvent::class,
        )
    }

    test("Direct connection with a replicaSet keeps the set name in the Single description") {
        val direct = TopologySettings(listOf(a), directConnection = true, replicaSetName = "rs")
        TopologyStateMachine.open(direct).description.setName shouldBe "rs"
    }

    test("outcomes from removed servers and with an older topologyVersion are ignored") {
        val pid = "{\$oid: '000000000000000000000001'}"
        var td = TopologyStateMachine.open(rs).description
        td = TopologyStateMachine.onServerDescription(td, primary(a, "'a:27017'", ", topologyVersion: {processId: $pid, counter: 5}"), rs).description
        TopologyStateMachine.onServerDescription(td, primary(b, "'b:27017'"), rs).ignored shouldBe true
        val older = hello(a, "{ok: 1, secondary: true, setName: 'rs', hosts: ['a:27017'], topologyVersion: {processId: $pid, counter: 4}}")
        val u = TopologyStateMachine.onServerDescription(td, older, rs)
        u.ignored shouldBe true
        u.description shouldBe td
        u.actions shouldBe emptyList()
    }

    test("an equal description is applied (RTT kept fresh) but publishes no event") {
        val single = TopologySettings(listOf(a), directConnection = true)
        var td = TopologyStateMachine.open(single).description
        val first = ServerDescription.fromHello(a, BsonDocument.parse("{ok: 1, isWritablePrimary: true, maxWireVersion: 21}"), 5.0)
        td = TopologyStateMachine.onServerDescription(td, first, single).description
        val u = TopologyStateMachine.onServerDescription(td, first.copy(roundTripTimeMillis = 9.0), single)
        u.ignored shouldBe false
        u.description.servers.getValue(a).roundTripTimeMillis shouldBe 9.0
        u.events(id, 1) shouldBe emptyList()
        u.actions shouldContainExactly listOf(TopologyAction.MarkPoolReady(a))
    }

    test("Single with a replicaSet name replaces a server of another set with Unknown and does not mark its pool ready") {
        val settings = TopologySettings(listOf(a), directConnection = true, replicaSetName = "rs")
        val td = TopologyStateMachine.open(settings).description
        val u = TopologyStateMachine.onServerDescription(td, hello(a, "{ok: 1, secondary: true, setName: 'other', maxWireVersion: 21}"), settings)
        u.description.type shouldBe TopologyType.SINGLE
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.actions shouldBe emptyList()
        val ok = TopologyStateMachine.onServerDescription(td, hello(a, "{ok: 1, arbiterOnly: true, setName: 'rs', maxWireVersion: 21}"), settings)
        ok.actions shouldContainExactly listOf(TopologyAction.MarkPoolReady(a))
    }

    test("pre-6.0 and 6.0+ stale primary rules differ on setVersion ordering") {
        val settings = TopologySettings(listOf(a, b), replicaSetName = "rs")
        fun run(wire: Int): TopologyDescription {
            var td = TopologyStateMachine.open(settings).description
            td = TopologyStateMachine.onServerDescription(
                td,
                hello(a, "{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017','b:27017'], setVersion: 2, electionId: {\$oid: '000000000000000000000001'}, maxWireVersion: $wire}"),
                settings,
            ).description
            return TopologyStateMachine.onServerDescription(
                td,
                hello(b, "{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017','b:27017'], setVersion: 1, electionId: {\$oid: '000000000000000000000002'}, maxWireVersion: $wire}"),
                settings,
            ).description
        }
        // 6.0+: the newer electionId wins although its setVersion is lower.
        run(17).primary?.address shouldBe b
        // Pre-6.0: setVersion is compared first, so b is the stale one.
        val old = run(9)
        old.primary?.address shouldBe a
        old.servers.getValue(b).error!! shouldContain "electionId/setVersion mismatch"
    }

    test("load-balanced mode starts with a LoadBalancer server, a ready pool, and ignores monitor outcomes") {
        val lb = TopologySettings(listOf(a), loadBalanced = true)
        val u = TopologyStateMachine.open(lb)
        u.description.type shouldBe TopologyType.LOAD_BALANCED
        u.description.servers.getValue(a).type shouldBe ServerType.LOAD_BALANCER
        u.actions shouldContainExactly listOf(TopologyAction.MarkPoolReady(a))
        u.events(id, 1).map { it::class } shouldContainExactly listOf(
            TopologyOpeningEvent::class, TopologyDescriptionChangedEvent::class, ServerOpeningEvent::class,
            ServerDescriptionChangedEvent::class, TopologyDescriptionChangedEvent::class,
        )
        TopologyStateMachine.onServerDescription(u.description, ServerDescription.unknown(a), lb).ignored shouldBe true
    }

    test("closing removes every server and ends with TopologyClosed") {
        val td = TopologyStateMachine.open(rs).description
        val u = TopologyStateMachine.close(td)
        u.description shouldBe TopologyDescription.EMPTY
        u.actions shouldContainExactly listOf(TopologyAction.StopMonitoring(a), TopologyAction.StopMonitoring(b))
        val events = u.events(id, 3)
        events.map { it::class } shouldContainExactly listOf(
            ServerClosedEvent::class, ServerClosedEvent::class, TopologyDescriptionChangedEvent::class, TopologyClosedEvent::class,
        )
        events.last().shouldBeInstanceOf<TopologyClosedEvent>().topologyId shouldBe id
    }

    test("configuration validation rejects the combinations the specs forbid") {
        shouldThrow<InvalidTopologySettingsException> { TopologySettings(listOf(a, b), directConnection = true) }
        shouldThrow<InvalidTopologySettingsException> { TopologySettings(listOf(a, b), loadBalanced = true) }
        shouldThrow<InvalidTopologySettingsException> { TopologySettings(listOf(a), loadBalanced = true, replicaSetName = "rs") }
        shouldThrow<InvalidTopologySettingsException> { TopologySettings(listOf(a), loadBalanced = true, directConnection = true) }
        shouldThrow<InvalidTopologySettingsException> { TopologySettings(emptyList()) }
        TopologySettings(listOf(a), directConnection = true, replicaSetName = "rs").initialType shouldBe TopologyType.SINGLE
        // one family: a caller that catches InvalidSettingsException catches these too
        shouldThrow<InvalidSettingsException> { TopologySettings(listOf(a, b), directConnection = true) }
        TopologySettings(listOf(a), directConnection = false, replicaSetName = "rs").initialType shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
        TopologySettings(listOf(a)).initialType shouldBe TopologyType.UNKNOWN
    }
})
