package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonDocument
import org.bson.types.ObjectId

class ServerDescriptionSpec : FunSpec({
    val a = ServerAddress("a", 27017)
    fun hello(json: String, rtt: Double? = null) = ServerDescription.fromHello(a, BsonDocument.parse(json), rtt)

    test("isWritablePrimary is read before ismaster") {
        hello("{ok: 1, isWritablePrimary: false, ismaster: true, setName: 'rs', secondary: true}").type shouldBe ServerType.RS_SECONDARY
        hello("{ok: 1, ismaster: true, setName: 'rs'}").type shouldBe ServerType.RS_PRIMARY
        hello("{ok: 1, isWritablePrimary: true}").type shouldBe ServerType.STANDALONE
    }

    test("server types from the spec's table") {
        hello("{ok: 1, isreplicaset: true, setName: 'rs'}").type shouldBe ServerType.RS_GHOST
        hello("{ok: 1, msg: 'isdbgrid'}").type shouldBe ServerType.MONGOS
        hello("{ok: 1, setName: 'rs', hidden: true, secondary: true}").type shouldBe ServerType.RS_OTHER
        hello("{ok: 1, setName: 'rs', arbiterOnly: true}").type shouldBe ServerType.RS_ARBITER
        hello("{ok: 1, setName: 'rs'}").type shouldBe ServerType.RS_OTHER
        hello("{ok: 0, isWritablePrimary: true}").type shouldBe ServerType.UNKNOWN
        hello("{isWritablePrimary: true}").type shouldBe ServerType.UNKNOWN
    }

    test("host names are lower-cased and every field is parsed") {
        val d = hello(
            """{ok: 1.0, isWritablePrimary: true, setName: 'rs', me: 'A:27017', hosts: ['A:27017', 'B'], passives: ['C:1'],
               arbiters: ['D:2'], primary: 'A:27017', tags: {dc: 'ny'}, setVersion: {${'$'}numberLong: '7'},
               electionId: {${'$'}oid: '000000000000000000000009'}, minWireVersion: 0, maxWireVersion: 21,
               logicalSessionTimeoutMinutes: 30, lastWrite: {lastWriteDate: {${'$'}date: 1000}, opTime: {ts: 1}},
               topologyVersion: {processId: {${'$'}oid: '000000000000000000000001'}, counter: {${'$'}numberLong: '4'}},
               iscryptd: false, helloOk: true}""",
            rtt = 3.5,
        )
        d.me shouldBe ServerAddress("a", 27017)
        d.hosts shouldBe setOf(ServerAddress("a"), ServerAddress("b"))
        d.passives shouldBe setOf(ServerAddress("c", 1))
        d.arbiters shouldBe setOf(ServerAddress("d", 2))
        d.primary shouldBe ServerAddress("a")
        d.tags shouldBe mapOf("dc" to "ny")
        d.setVersion shouldBe 7L
        d.electionId shouldBe ObjectId("000000000000000000000009")
        d.maxWireVersion shouldBe 21
        d.logicalSessionTimeoutMinutes shouldBe 30
        d.lastWriteDate shouldBe 1000L
        d.opTime shouldBe BsonDocument.parse("{ts: 1}")
        d.topologyVersion shouldBe TopologyVersion(ObjectId("000000000000000000000001"), 4)
        d.iscryptd shouldBe false
        d.helloOk shouldBe true
        d.roundTripTimeMillis shouldBe 3.5
    }

    test("a reply with fields of the wrong type gives Unknown with a clear error instead of throwing") {
        val d = hello("{ok: 1, setName: 'rs', hosts: 'a:27017'}")
        d.type shouldBe ServerType.UNKNOWN
        d.error!! shouldContain "hosts"
        hello("{ok: 1, hosts: ['a:99999']}").error!! shouldContain "invalid hello reply"
    }

    test("equality covers the (=) fields and ignores round-trip time and update time") {
        val base = hello("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017']}")
        base.copy(roundTripTimeMillis = 99.0, minRoundTripTimeMillis = 1.0, lastUpdateTimeMillis = 5, lastWriteDate = 7) shouldBe base
        base.copy(error = "boom") shouldNotBe base
        base.copy(setVersion = 2) shouldNotBe base
        base.copy(tags = mapOf("x" to "y")) shouldNotBe base
        base.copy(iscryptd = true) shouldNotBe base
        base.copy(address = ServerAddress("b")) shouldNotBe base
        base.copy(topologyVersion = TopologyVersion(ObjectId(), 1)) shouldNotBe base
    }

    test("topologyVersion comparison follows the spec") {
        val p = ObjectId()
        TopologyVersion.compare(null, TopologyVersion(p, 1)) shouldBe -1
        TopologyVersion.compare(TopologyVersion(p, 1), null) shouldBe -1
        TopologyVersion.compare(TopologyVersion(p, 1), TopologyVersion(ObjectId(), 0)) shouldBe -1
        TopologyVersion.compare(TopologyVersion(p, 2), TopologyVersion(p, 1)) shouldBe 1
        TopologyVersion.compare(TopologyVersion(p, 2), TopologyVersion(p, 2)) shouldBe 0
    }

    test("topology compatibility error names the server and the wire versions") {
        val old = hello("{ok: 1, isWritablePrimary: true, maxWireVersion: 6}")
        val td = TopologyDescription(TopologyType.SINGLE, mapOf(a to old))
        td.compatible shouldBe false
        td.compatibilityError!! shouldContain "Server at a:27017 reports wire version 6"
        val new = hello("{ok: 1, isWritablePrimary: true, minWireVersion: 999, maxWireVersion: 1000}")
        TopologyDescription(TopologyType.SINGLE, mapOf(a to new)).compatibilityError!! shouldContain "requires wire version 999"
        TopologyDescription(TopologyType.SINGLE, mapOf(a to ServerDescription.unknown(a))).compatible shouldBe true
    }

    test("logicalSessionTimeoutMinutes is the minimum over data-bearing servers, null if any lacks it") {
        val b = ServerAddress("b")
        val p = ServerDescription(a, ServerType.RS_PRIMARY, logicalSessionTimeoutMinutes = 30, maxWireVersion = 21)
        val s = ServerDescription(b, ServerType.RS_SECONDARY, logicalSessionTimeoutMinutes = 10, maxWireVersion = 21)
        TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(a to p, b to s)).logicalSessionTimeoutMinutes shouldBe 10
        TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(a to p, b to s.copy(logicalSessionTimeoutMinutes = null)))
            .logicalSessionTimeoutMinutes shouldBe null
        val arbiter = ServerDescription(b, ServerType.RS_ARBITER, maxWireVersion = 21)
        TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(a to p, b to arbiter)).logicalSessionTimeoutMinutes shouldBe 30
    }
})
