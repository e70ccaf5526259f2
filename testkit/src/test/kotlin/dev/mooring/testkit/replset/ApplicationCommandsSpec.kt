package dev.mooring.testkit.replset

import dev.mooring.testkit.WireClient
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

class ApplicationCommandsSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    fun insert(x: Int) = BsonDocument("insert", BsonString("things"))
        .append("documents", BsonArray(listOf(BsonDocument("x", BsonInt32(x)))))
    fun find() = BsonDocument("find", BsonString("things"))
    fun ok(d: BsonDocument) = d.getNumber("ok").intValue()

    test("writes succeed only on the primary; others answer NotWritablePrimary with topologyVersion") {
        ReplicaSetSimulator.start().use { rs ->
            val lwBefore = rs.members[1].lastWrite
            ok(WireClient.run(rs.members[0].address, insert(1), "test")) shouldBe 1
            val e = WireClient.run(rs.members[1].address, insert(2), "test")
            e.code() shouldBe 10107
            e.getString("codeName").value shouldBe "NotWritablePrimary"
            e.tv() shouldBe rs.members[1].topologyVersion
            rs.collections.documents("test", "things").size shouldBe 1
            (rs.members[1].lastWrite.opTime > lwBefore.opTime) shouldBe true
            rs.members[1].lastWrite.opTime shouldBe rs.members[0].lastWrite.opTime
            // scripted replication lag shows in the secondary's hello, without a topologyVersion bump
            val tv = rs.members[2].topologyVersion
            rs.setLastWriteDate(rs.members[2], 1_000_000L)
            val lagging = WireClient.run(rs.members[2].address, WireClient.hello())
            lagging.getDocument("lastWrite").getDateTime("lastWriteDate").value shouldBe 1_000_000L
            lagging.tv() shouldBe tv
        }
    }

    test("reads on a secondary need a non-primary \$readPreference") {
        ReplicaSetSimulator.start(dataMembers = 2, arbiters = 1).use { rs ->
            ok(WireClient.run(rs.members[0].address, insert(7), "test")) shouldBe 1
            WireClient.run(rs.members[1].address, find(), "test").code() shouldBe 13435
            val r = WireClient.run(rs.members[1].address, find().append("\$readPreference", BsonDocument("mode", BsonString("secondaryPreferred"))), "test")
            r.getDocument("cursor").getArray("firstBatch").size shouldBe 1
            WireClient.run(rs.members[2].address, find().append("\$readPreference", BsonDocument("mode", BsonString("secondary"))), "test").code() shouldBe 13436
        }
    }

    test("replSetStepDown over the wire steps the primary down; on a secondary it is an error") {
        ReplicaSetSimulator.start().use { rs ->
            val cmd = BsonDocument("replSetStepDown", BsonInt32(60))
            WireClient.run(rs.members[1].address, cmd).code() shouldBe 10107
            WireClient.run(rs.members[0].address, cmd, "test").code() shouldBe 13
            ok(WireClient.run(rs.members[0].address, cmd)) shouldBe 1
            rs.primary shouldBe null
            WireClient.run(rs.members[0].address, WireClient.hello())["isWritablePrimary"] shouldBe BsonBoolean.FALSE
        }
    }

    test("a primary stepped down or killed aborts its open transactions: their commit on the next primary is NoSuchTransaction") {
        ReplicaSetSimulator.start().use { rs ->
            fun inTxn(cmd: BsonDocument, session: Int, start: Boolean = false) = cmd.apply {
                put("lsid", BsonDocument("id", BsonInt32(session)))
                put("txnNumber", org.bson.BsonInt64(1))
                put("autocommit", BsonBoolean.FALSE)
                if (start) put("startTransaction", BsonBoolean.TRUE)
            }
            fun commit(session: Int) = inTxn(BsonDocument("commitTransaction", BsonInt32(1)), session)
            ok(WireClient.run(rs.members[0].address, inTxn(insert(1), 1, start = true), "test")) shouldBe 1
            rs.stepDown()
            rs.elect(rs.members[1])
            WireClient.run(rs.members[1].address, commit(1)).code() shouldBe 251
            // killed: the same
            ok(WireClient.run(rs.members[1].address, inTxn(insert(2), 2, start = true), "test")) shouldBe 1
            rs.kill(rs.members[1])
            rs.elect(rs.members[2])
            WireClient.run(rs.members[2].address, commit(2)).code() shouldBe 251
            rs.collections.documents("test", "things").size shouldBe 0
            // a transaction that did not see a stepdown commits
            ok(WireClient.run(rs.members[2].address, inTxn(insert(3), 3, start = true), "test")) shouldBe 1
            ok(WireClient.run(rs.members[2].address, commit(3))) shouldBe 1
            rs.collections.documents("test", "things").size shouldBe 1
        }
    }

    test("ping works everywhere, unknown commands are CommandNotFound, fail points are per member") {
        ReplicaSetSimulator.start().use { rs ->
            rs.members.forEach { ok(WireClient.run(it.address, BsonDocument("ping", BsonInt32(1)))) shouldBe 1 }
            WireClient.run(rs.members[0].address, BsonDocument("frobnicate", BsonInt32(1))).code() shouldBe 59
            rs.members[0].configureFailPoint(
                BsonDocument("configureFailPoint", BsonString("failCommand"))
                    .append("mode", BsonDocument("times", BsonInt32(1)))
                    .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("insert")))).append("errorCode", BsonInt32(91))),
            )
            WireClient.run(rs.members[0].address, insert(1), "test").code() shouldBe 91
            ok(WireClient.run(rs.members[0].address, insert(1), "test")) shouldBe 1
            rs.members[1].counters shouldNotBe null
            // a fail point set over the wire on one member does not affect another
            ok(WireClient.run(rs.members[1].address, BsonDocument("configureFailPoint", BsonString("failCommand"))
                .append("mode", BsonString("alwaysOn"))
                .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("ping")))).append("errorCode", BsonInt32(11600))))) shouldBe 1
            WireClient.run(rs.members[1].address, BsonDocument("ping", BsonInt32(1))).code() shouldBe 11600
            ok(WireClient.run(rs.members[2].address, BsonDocument("ping", BsonInt32(1)))) shouldBe 1
        }
    }

    test("replSetGetStatus lists the members with their states as this member sees them") {
        ReplicaSetSimulator.start(dataMembers = 3, arbiters = 1).use { rs ->
            val (m0, m1, m2, arb) = rs.members
            rs.kill(m2)
            val st = WireClient.run(m1.address, BsonDocument("replSetGetStatus", BsonInt32(1)))
            ok(st) shouldBe 1
            st.getString("set").value shouldBe "rs0"
            st.getInt32("myState").value shouldBe 2
            val byName = st.getArray("members").associate { it.asDocument().getString("name").value to it.asDocument() }
            byName.getValue(m0.host).getString("stateStr").value shouldBe "PRIMARY"
            byName.getValue(m1.host)["self"] shouldBe BsonBoolean.TRUE
            byName.getValue(m2.host).getDouble("health").value shouldBe 0.0
            byName.getValue(arb.host).getInt32("state").value shouldBe 7
            WireClient.run(m1.address, BsonDocument("replSetGetStatus", BsonInt32(1)), "test").code() shouldBe 13
        }
    }
})
