package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.MemberConfig
import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.cmap.MongoCommandException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import kotlin.time.Duration.Companion.seconds

class ReplicaSetHelloSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val client = RawClient()
    afterSpec { client.close() }

    test("a primary's hello carries the set, electionId, topologyVersion and lastWrite") {
        ReplicaSetSimulator.start().use { rs ->
            val p = rs.members[0]
            rs.primary shouldBe p
            val h = client.run(p, RawClient.hello())
            h["isWritablePrimary"] shouldBe BsonBoolean.TRUE
            h["ismaster"] shouldBe null
            h["secondary"] shouldBe BsonBoolean.FALSE
            h.getString("setName").value shouldBe "rs0"
            h.getInt32("setVersion").value shouldBe 1
            h.strings("hosts") shouldContainExactly rs.members.map { it.host }
            h.getString("me").value shouldBe p.host
            h.getString("primary").value shouldBe p.host
            h["electionId"].shouldBeInstanceOf<BsonObjectId>()
            h.tv() shouldBe p.topologyVersion
            h.getDocument("lastWrite").getDocument("opTime")["ts"]!!.isTimestamp shouldBe true
            h.getDocument("lastWrite")["lastWriteDate"]!!.isDateTime shouldBe true
            h.getInt32("maxWireVersion").value shouldBe 21
            h.getInt32("minWireVersion").value shouldBe 0
            h.getInt32("logicalSessionTimeoutMinutes").value shouldBe 30
            h.getInt32("maxBsonObjectSize").value shouldBe 16 * 1024 * 1024
            h.getInt32("maxMessageSizeBytes").value shouldBe 48_000_000
            h.getInt32("maxWriteBatchSize").value shouldBe 100_000
            h["connectionId"]!!.isNumber shouldBe true
            h["localTime"]!!.isDateTime shouldBe true
            h.getNumber("ok").intValue() shouldBe 1
            p.host shouldBe "127.0.0.1:${p.port}"
        }
    }

    test("a secondary names the primary and has no electionId") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[2]
            s.state shouldBe MemberState.SECONDARY
            val h = client.run(s, RawClient.hello())
            h["isWritablePrimary"] shouldBe BsonBoolean.FALSE
            h["secondary"] shouldBe BsonBoolean.TRUE
            h.getString("primary").value shouldBe rs.members[0].host
            h.getString("me").value shouldBe s.host
            h["electionId"] shouldBe null
        }
    }

    test("an arbiter is listed in arbiters, not hosts, and reports arbiterOnly") {
        ReplicaSetSimulator.start(dataMembers = 2, arbiters = 1).use { rs ->
            val a = rs.members[2]
            a.state shouldBe MemberState.ARBITER
            val h = client.run(a, RawClient.hello())
            h["arbiterOnly"] shouldBe BsonBoolean.TRUE
            h["secondary"] shouldBe BsonBoolean.FALSE
            h.strings("arbiters") shouldContainExactly listOf(a.host)
            h.strings("hosts") shouldContainExactly rs.members.take(2).map { it.host }
            h["lastWrite"] shouldBe null
            shouldThrow<IllegalArgumentException> { rs.elect(a) }
        }
    }

    test("the legacy hello over OP_QUERY answers ismaster and echoes helloOk") {
        ReplicaSetSimulator.start().use { rs ->
            val c = client.connect(rs.members[0])
            val handshake = c.description!!.helloReply
            handshake["ismaster"] shouldBe BsonBoolean.TRUE
            handshake["isWritablePrimary"] shouldBe null
            handshake["helloOk"] shouldBe BsonBoolean.TRUE
            handshake.getString("setName").value shouldBe "rs0"
            val viaMsg = c.command("admin", BsonDocument("isMaster", BsonInt32(1)))
            viaMsg["ismaster"] shouldBe BsonBoolean.TRUE
            c.close()
        }
    }

    test("an election bumps every member's topologyVersion and raises the electionId") {
        ReplicaSetSimulator.start().use { rs ->
            val before = rs.members.associateWith { it.topologyVersion }
            val oldElectionId = rs.electionId!!
            rs.elect(rs.members[1])
            rs.primary shouldBe rs.members[1]
            rs.members[0].state shouldBe MemberState.SECONDARY
            rs.electionId!! shouldNotBe oldElectionId
            (rs.electionId!! > oldElectionId) shouldBe true
            rs.term shouldBe 2L
            for ((m, tv) in before) {
                m.topologyVersion.processId shouldBe tv.processId
                (m.topologyVersion.counter > tv.counter) shouldBe true
            }
            val h = client.run(rs.members[1], RawClient.hello())
            h["isWritablePrimary"] shouldBe BsonBoolean.TRUE
            (h["electionId"] as BsonObjectId).value shouldBe rs.electionId
            client.run(rs.members[0], RawClient.hello())["electionId"] shouldBe null
        }
    }

    test("a step down leaves the set without a primary until the next election") {
        ReplicaSetSimulator.start().use { rs ->
            rs.stepDown()
            rs.primary shouldBe null
            for (m in rs.members) {
                val h = client.run(m, RawClient.hello())
                h["isWritablePrimary"] shouldBe BsonBoolean.FALSE
                h["secondary"] shouldBe BsonBoolean.TRUE
                h["primary"] shouldBe null
            }
            shouldThrow<IllegalStateException> { rs.stepDown(rs.members[1]) }
            rs.elect(rs.members[2])
            client.run(rs.members[0], RawClient.hello()).getString("primary").value shouldBe rs.members[2].host
        }
    }

    test("recovering, quiesce mode and wire versions are scriptable") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[1]
            rs.setRecovering(s, true)
            val rec = client.run(s, RawClient.hello())
            rec["secondary"] shouldBe BsonBoolean.FALSE
            rec["isWritablePrimary"] shouldBe BsonBoolean.FALSE
            rec.getString("setName").value shouldBe "rs0"
            rs.setRecovering(s, false)
            rs.setWireVersions(s, 6, 17)
            client.run(s, RawClient.hello()).getInt32("maxWireVersion").value shouldBe 17
            shouldThrow<IllegalArgumentException> { rs.setWireVersions(s, 9, 8) }
            val c = client.connect(s)
            rs.setShuttingDown(s, true)
            val err = shouldThrow<MongoCommandException> { c.command("admin", BsonDocument("ping", BsonInt32(1))) }
            err.code shouldBe 91
            err.response["topologyVersion"] shouldNotBe null
            // the handshake of a new connection fails the same way, as on a quiescing mongod
            shouldThrow<MongoCommandException> { client.connect(s) }.code shouldBe 91
            rs.setShuttingDown(s, false)
            c.command("admin", BsonDocument("ping", BsonInt32(1))).getNumber("ok").intValue() shouldBe 1
            c.close()
        }
    }

    test("bad arguments are typed errors") {
        shouldThrow<IllegalArgumentException> { ReplicaSetSimulator.start(dataMembers = 0) }
        shouldThrow<IllegalArgumentException> { ReplicaSetSimulator.start(initialPrimary = 3) }
        shouldThrow<IllegalArgumentException> { MemberConfig(0, "127.0.0.1:1", hidden = true, priority = 1.0) }
        ReplicaSetSimulator.start().use { rs ->
            ReplicaSetSimulator.start(dataMembers = 1).use { other ->
                shouldThrow<IllegalArgumentException> { rs.elect(other.members[0]) }
            }
        }
    }
})
