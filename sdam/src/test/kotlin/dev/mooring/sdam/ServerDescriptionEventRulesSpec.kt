package dev.mooring.sdam

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.srv.SrvRecordsUpdate
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonDocument
import kotlin.random.Random

/**
 * Which server description changes publish a ServerDescriptionChangedEvent, and in which order
 * (SDAM logging-and-monitoring "Events API", SDAM "Server Description Equality" and the note that
 * PossiblePrimary is synonymous with Unknown for multi-threaded clients): one event, for the
 * processed server only, before ServerClosed, TopologyDescriptionChanged and ServerOpening.
 */
class ServerDescriptionEventRulesSpec : FunSpec({
    val a = ServerAddress("a")
    val b = ServerAddress("b")
    val c = ServerAddress("c")
    val id = TopologyId("t")

    fun hello(addr: ServerAddress, json: String) = ServerDescription.fromHello(addr, BsonDocument.parse(json))
    fun secondary(addr: ServerAddress, primary: String, hosts: String) =
        hello(addr, "{ok: 1, isWritablePrimary: false, secondary: true, setName: 'rs', primary: '$primary', hosts: [$hosts], maxWireVersion: 21}")
    fun primary(addr: ServerAddress, hosts: String, extra: String = "") =
        hello(addr, "{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: [$hosts], maxWireVersion: 21 $extra}")

    fun TopologyUpdate.list(): List<MooringEvent> = events(id, 1)
    fun List<MooringEvent>.kinds(): List<String> = map {
        when (it) {
            is ServerDescriptionChangedEvent -> "changed ${it.address}"
            is ServerClosedEvent -> "closed ${it.address}"
            is ServerOpeningEvent -> "opening ${it.address}"
            is TopologyDescriptionChangedEvent -> "topology"
            else -> it::class.simpleName!!
        }
    }

    test("Unknown topology: a secondary naming an unchecked seed as primary publishes one server event, for itself") {
        val s = TopologySettings(listOf(a, b))
        val u = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, secondary(a, "b:27017", "'a:27017', 'b:27017'"), s)
        u.description.servers.getValue(b).type shouldBe ServerType.POSSIBLE_PRIMARY
        u.list().kinds() shouldContainExactly listOf("changed a:27017", "topology")
        val t = u.list()[1] as TopologyDescriptionChangedEvent
        t.newDescription.servers.getValue(b).type shouldBe ServerType.POSSIBLE_PRIMARY
    }

    test("ReplicaSetNoPrimary: a member naming a new host as primary announces it after the topology change, with no server event for it") {
        val s = TopologySettings(listOf(a), replicaSetName = "rs")
        val u = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, secondary(a, "c:27017", "'a:27017', 'c:27017'"), s)
        u.description.servers.getValue(c).type shouldBe ServerType.POSSIBLE_PRIMARY
        u.list().kinds() shouldContainExactly listOf("changed a:27017", "topology", "opening c:27017")
    }

    test("the later check of a PossiblePrimary server reports PossiblePrimary as its previous description") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, secondary(a, "b:27017", "'a:27017', 'b:27017'"), s).description
        val u = TopologyStateMachine.onServerDescription(td, primary(b, "'a:27017', 'b:27017'"), s)
        u.list().kinds() shouldContainExactly listOf("changed b:27017", "topology")
        val e = u.list()[0] as ServerDescriptionChangedEvent
        e.previousDescription.type shouldBe ServerType.POSSIBLE_PRIMARY
        e.newDescription.type shouldBe ServerType.RS_PRIMARY
    }

    test("a PossiblePrimary server whose check gives a plain Unknown description has no server event (the two are synonyms)") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, secondary(a, "b:27017", "'a:27017', 'b:27017'"), s).description
        val u = TopologyStateMachine.onServerDescription(td, ServerDescription.unknown(b), s)
        u.list().kinds() shouldContainExactly listOf("topology")
    }

    test("ReplicaSetWithPrimary: a new primary resets the old one to Unknown without a server event for the old one") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val hosts = "'a:27017', 'b:27017'"
        var td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, primary(a, hosts, ", electionId: {\$oid: '000000000000000000000001'}"), s).description
        td = TopologyStateMachine.onServerDescription(td, secondary(b, "a:27017", hosts), s).description
        val u = TopologyStateMachine.onServerDescription(td, primary(b, hosts, ", electionId: {\$oid: '000000000000000000000002'}"), s)
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.list().kinds() shouldContainExactly listOf("changed b:27017", "topology")
        (u.list()[1] as TopologyDescriptionChangedEvent).newDescription.servers.getValue(a).type shouldBe ServerType.UNKNOWN
    }

    test("a checked server the step removes gets its event (with the description it reported) before its ServerClosed") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val hosts = "'a:27017', 'b:27017'"
        val td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, primary(a, hosts), s).description
        val wrongSet = hello(b, "{ok: 1, isWritablePrimary: false, secondary: true, setName: 'other', hosts: ['b:27017'], maxWireVersion: 21}")
        val u = TopologyStateMachine.onServerDescription(td, wrongSet, s)
        u.list().kinds() shouldContainExactly listOf("changed b:27017", "closed b:27017", "topology")
        (u.list()[0] as ServerDescriptionChangedEvent).newDescription.setName shouldBe "other"
    }

    test("a primary that drops members: its own event, then ServerClosed per dropped member, the topology, then ServerOpening per new one") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val u = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, primary(a, "'a:27017', 'c:27017'"), s)
        u.list().kinds() shouldContainExactly listOf("changed a:27017", "closed b:27017", "topology", "opening c:27017")
    }

    test("an equal re-check (only the round-trip time moves) publishes nothing") {
        val s = TopologySettings(listOf(a), directConnection = true)
        val first = hello(a, "{ok: 1, isWritablePrimary: true, maxWireVersion: 21}")
        val td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, first, s).description
        val again = ServerDescription.fromHello(a, BsonDocument.parse("{ok: 1, isWritablePrimary: true, maxWireVersion: 21}"), roundTripTimeMillis = 7.0)
        TopologyStateMachine.onServerDescription(td, again, s).list().shouldBeEmpty()
    }

    test("Single with a required set name: a member of another set is replaced by Unknown, and that is the event's new description") {
        val s = TopologySettings(listOf(a), directConnection = true, replicaSetName = "rs")
        val other = hello(a, "{ok: 1, isWritablePrimary: true, setName: 'x', hosts: ['a:27017'], maxWireVersion: 21}")
        val u = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, other, s)
        u.list().kinds() shouldContainExactly listOf("changed a:27017", "topology")
        (u.list()[0] as ServerDescriptionChangedEvent).newDescription.type shouldBe ServerType.UNKNOWN
    }

    test("Sharded: a mongos check changes only that mongos; a non-mongos is reported, then closed") {
        val s = TopologySettings(listOf(a, b))
        val mongos = "{ok: 1, isWritablePrimary: true, msg: 'isdbgrid', maxWireVersion: 21}"
        val td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, hello(a, mongos), s).description
        td.type shouldBe TopologyType.SHARDED
        val u = TopologyStateMachine.onServerDescription(td, hello(b, "{ok: 1, isWritablePrimary: true, maxWireVersion: 21}"), s)
        u.list().kinds() shouldContainExactly listOf("changed b:27017", "closed b:27017", "topology")
    }

    test("an application error publishes one server event, for the server it marked Unknown") {
        val s = TopologySettings(listOf(a, b), replicaSetName = "rs")
        val hosts = "'a:27017', 'b:27017'"
        var td = TopologyStateMachine.onServerDescription(TopologyStateMachine.open(s).description, primary(a, hosts), s).description
        td = TopologyStateMachine.onServerDescription(td, secondary(b, "a:27017", hosts), s).description
        val error = ApplicationError(a, ApplicationErrorKind.NETWORK, message = "reset", generation = 0, handshakeCompleted = true)
        val u = ErrorHandling.onApplicationError(td, error, 0, s)
        u.list().kinds() shouldContainExactly listOf("changed a:27017", "topology")
        // b still names a as primary, but b is not re-described: a is Unknown, not PossiblePrimary.
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
    }

    test("an SRV rescan adds and removes servers without server description events") {
        val s = TopologySettings(listOf(a, b))
        val td = TopologyStateMachine.open(s).description
        val u = SrvRecordsUpdate.apply(td, listOf(a, c), 0, Random(1))
        u.list().kinds() shouldContainExactly listOf("closed b:27017", "topology", "opening c:27017")
    }

    test("load-balanced: opening announces the load balancer's change from Unknown, monitor outcomes publish nothing") {
        val s = TopologySettings(listOf(a), loadBalanced = true)
        val u = TopologyStateMachine.open(s)
        val events = u.list()
        events.kinds() shouldContainExactly listOf("TopologyOpeningEvent", "topology", "opening a:27017", "changed a:27017", "topology")
        (events[3] as ServerDescriptionChangedEvent).newDescription.type shouldBe ServerType.LOAD_BALANCER
        events[4].shouldBeInstanceOf<TopologyDescriptionChangedEvent>()
        TopologyStateMachine.onServerDescription(u.description, ServerDescription.unknown(a), s).list().shouldBeEmpty()
    }
})
