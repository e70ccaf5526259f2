package dev.mooring.testkit.replset

import dev.mooring.testkit.WireClient
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

class ReconfigureSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    test("adding members, hiding one, making one passive and tagging one bumps setVersion and rewrites the lists") {
        ReplicaSetSimulator.start().use { rs ->
            val (a, b, c) = rs.members
            val tvBefore = a.topologyVersion
            lateinit var added: SimulatedMember
            lateinit var arbiter: SimulatedMember
            val cfg = rs.reconfigure {
                added = addMember(tags = mapOf("dc" to "east"))
                arbiter = addMember(arbiterOnly = true)
                update(b) { it.copy(hidden = true, priority = 0.0) }
                update(c) { it.copy(priority = 0.0, tags = mapOf("dc" to "west", "rack" to "1")) }
            }
            cfg.version shouldBe 2
            (a.topologyVersion.counter > tvBefore.counter) shouldBe true
            val h = WireClient.run(a.address, WireClient.hello())
            h.getInt32("setVersion").value shouldBe 2
            h.strings("hosts") shouldContainExactly listOf(a.host, added.host)
            h.strings("passives") shouldContainExactly listOf(c.host)
            h.strings("arbiters") shouldContainExactly listOf(arbiter.host)
            val hidden = WireClient.run(b.address, WireClient.hello())
            hidden["hidden"] shouldBe BsonBoolean.TRUE
            hidden["secondary"] shouldBe BsonBoolean.TRUE
            val passive = WireClient.run(c.address, WireClient.hello())
            passive["passive"] shouldBe BsonBoolean.TRUE
            passive.getDocument("tags") shouldBe BsonDocument("dc", BsonString("west")).append("rack", BsonString("1"))
            WireClient.run(added.address, WireClient.hello()).getDocument("tags") shouldBe BsonDocument("dc", BsonString("east"))
            WireClient.run(arbiter.address, WireClient.hello())["arbiterOnly"] shouldBe BsonBoolean.TRUE
            rs.members.size shouldBe 5
        }
    }

    test("a removed member answers as a ghost; removing the primary steps it down") {
        ReplicaSetSimulator.start().use { rs ->
            val p = rs.members[0]
            rs.reconfigure { remove(p) }
            rs.primary shouldBe null
            p.state shouldBe MemberState.REMOVED
            val ghost = WireClient.run(p.address, WireClient.hello())
            ghost["isreplicaset"] shouldBe BsonBoolean.TRUE
            ghost["setName"] shouldBe null
            ghost["hosts"] shouldBe null
            WireClient.run(rs.members[0].address, WireClient.hello()).strings("hosts") shouldContainExactly rs.members.map { it.host }
            rs.members.size shouldBe 2
            shouldThrow<IllegalArgumentException> { rs.elect(p) }
        }
    }

    test("an invalid configuration changes nothing and stops members added in the attempt") {
        ReplicaSetSimulator.start().use { rs ->
            val before = rs.currentConfig
            var added: SimulatedMember? = null
            shouldThrow<IllegalArgumentException> {
                rs.reconfigure {
                    added = addMember()
                    update(rs.members[1]) { it.copy(hidden = true) } // hidden needs priority 0
                }
            }
            rs.currentConfig shouldBe before
            added!!.isUp shouldBe false
            rs.allMembers.size shouldBe 3
        }
    }
})
