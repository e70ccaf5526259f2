package dev.mooring.testkit

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import kotlin.time.Duration.Companion.seconds

/** The simulators answer the `bulkWrite` admin command only when they claim MongoDB 8.0 (wire version 25), as mongod and mongos do. */
class ClientBulkWriteServerSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val command = BsonDocument.parse("""{bulkWrite: 1, ops: [{insert: 0, document: {_id: 1}}], nsInfo: [{ns: "db.c"}]}""")

    test("replica set members and mongoses of wire version 25 run bulkWrite; older ones do not know it") {
        for (wire in listOf(21, 25)) {
            ReplicaSetSimulator.start(maxWireVersion = wire).use { rs ->
                val reply = WireClient.run(rs.primary!!.address, command)
                if (wire >= 25) {
                    reply.getInt32("nInserted").value shouldBe 1
                    rs.collections.documents("db", "c").size shouldBe 1
                } else {
                    reply.getNumber("ok").intValue() shouldBe 0
                    reply.getInt32("code").value shouldBe 59
                }
            }
            ShardedClusterSimulator.start(1, maxWireVersion = wire).use { sharded ->
                val reply = WireClient.run(sharded.mongoses[0].address, command)
                if (wire >= 25) {
                    reply.getInt32("nInserted").value shouldBe 1
                } else {
                    reply.getNumber("ok").intValue() shouldBe 0
                    reply.getInt32("code").value shouldBe 59
                }
            }
        }
    }
})
