package dev.mooring.testkit

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import kotlin.time.Duration.Companion.seconds

/**
 * The simulated servers take a command's `rawData` (no effect: the test kit has no time-series
 * collections) only when they claim MongoDB 8.2 (wire version 27); older ones refuse it as an
 * unknown field (40415), as mongod and mongos before 8.2 do.
 */
class RawDataServerSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val insert = BsonDocument.parse("""{insert: "c", documents: [{_id: 1}], rawData: true}""")
    val find = BsonDocument.parse("""{find: "c", filter: {}, rawData: true}""")

    fun refused(reply: BsonDocument, command: String) {
        reply.getNumber("ok").intValue() shouldBe 0
        reply.getInt32("code").value shouldBe 40415
        reply.getString("errmsg").value shouldBe "BSON field '$command.rawData' is an unknown field."
    }

    test("a standalone server of wire version 27 runs rawData commands as without it; wire version 26 refuses the field") {
        WireServer.start().use { s ->
            s.maxWireVersion = 27
            WireClient.run(s.address, insert, "db").getInt32("n").value shouldBe 1
            WireClient.run(s.address, find, "db").getDocument("cursor").getArray("firstBatch").size shouldBe 1
            // a command that does not take rawData refuses it on 8.2 too
            refused(WireClient.run(s.address, BsonDocument.parse("{ping: 1, rawData: true}")), "ping")
            s.maxWireVersion = 26
            refused(WireClient.run(s.address, find, "db"), "find")
        }
    }

    test("replica set members and mongoses of wire version 27 take rawData; those of 25 refuse it") {
        for (wire in listOf(25, 27)) {
            ReplicaSetSimulator.start(maxWireVersion = wire).use { rs ->
                val reply = WireClient.run(rs.primary!!.address, insert, "db")
                if (wire >= 27) reply.getInt32("n").value shouldBe 1 else refused(reply, "insert")
            }
            ShardedClusterSimulator.start(1, maxWireVersion = wire).use { sharded ->
                val reply = WireClient.run(sharded.mongoses[0].address, find, "db")
                if (wire >= 27) reply.getNumber("ok").intValue() shouldBe 1 else refused(reply, "find")
            }
        }
    }
})
