package dev.mooring.testkit.replset

import dev.mooring.testkit.WireClient
import dev.mooring.testkit.server.RetryableWriteLabels
import dev.mooring.testkit.server.WhereSleep
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import kotlin.time.Duration.Companion.seconds

/** What the test kit does for retryable writes and the unified tests: labels, update, `$where` sleep, replSetFreeze, election handoff. */
class RetryableWriteSupportSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    fun labels(d: BsonDocument): List<String> = d.getArray("errorLabels", org.bson.BsonArray()).map { it.asString().value }
    val txn = ", lsid: {id: {\$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}, txnNumber: {\$numberLong: '1'}"

    test("a retryable write's retryable error gets RetryableWriteError; plain writes and explicit failCommand labels do not") {
        ReplicaSetSimulator.start().use { rs ->
            val secondary = rs.members[1]
            labels(WireClient.run(secondary.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}]$txn}"), "app")) shouldBe listOf("RetryableWriteError")
            labels(WireClient.run(secondary.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}]}"), "app")) shouldBe emptyList()
            val primary = rs.members[0]
            primary.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 91, errorLabels: []}}"))
            labels(WireClient.run(primary.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 2}]$txn}"), "app")) shouldBe emptyList()
            primary.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], writeConcernError: {code: 91, errmsg: 'x'}}}"))
            val wce = WireClient.run(primary.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 3}]$txn}"), "app")
            wce.getNumber("ok").intValue() shouldBe 1
            labels(wce) shouldBe listOf("RetryableWriteError")
            primary.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 2}}"))
            labels(WireClient.run(primary.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 4}]$txn}"), "app")) shouldBe emptyList()
        }
        RetryableWriteLabels.isRetryableWrite(BsonDocument.parse("{insert: 'c', txnNumber: 1, autocommit: false}")) shouldBe false
    }

    test("update applies operators or a replacement, upserts, and reports unknown operators as write errors") {
        ReplicaSetSimulator.start().use { rs ->
            val p = rs.members[0]
            WireClient.run(p.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 1, a: 1}, {_id: 2, a: 1}]}"), "app")
            val one = WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [{q: {a: 1}, u: {\$set: {b: 'x'}}}]}"), "app")
            one.getInt32("n").value shouldBe 1
            one.getInt32("nModified").value shouldBe 1
            WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [{q: {a: 1}, u: {\$set: {b: 'y'}}, multi: true}]}"), "app").getInt32("n").value shouldBe 2
            WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [{q: {_id: 2}, u: {z: true}}]}"), "app")
            val up = WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [{q: {_id: 9}, u: {\$set: {a: 5}}, upsert: true}]}"), "app")
            up.getArray("upserted").single().asDocument()["_id"]!!.asInt32().value shouldBe 9
            rs.collections.documents("app", "c") shouldBe listOf(
                BsonDocument.parse("{_id: 1, a: 1, b: 'y'}"), BsonDocument.parse("{_id: 2, z: true}"), BsonDocument.parse("{_id: 9, a: 5}"),
            )
            WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [{q: {_id: 9}, u: {\$inc: {a: 2}, \$unset: {b: 1}}}]}"), "app").getInt32("nModified").value shouldBe 1
            rs.collections.documents("app", "c").last() shouldBe BsonDocument.parse("{_id: 9, a: 7}")
            // as mongod: an unknown modifier is FailedToParse (9); JavaScript the engine cannot run is refused too
            for ((bad, code) in listOf("{q: {}, u: {\$bogus: {a: 1}}}" to 9, "{q: {\$where: 'this.a > 1'}, u: {\$set: {a: 1}}}" to 2)) {
                val reply = WireClient.run(p.address, BsonDocument.parse("{update: 'c', updates: [$bad]}"), "app")
                reply.getArray("writeErrors").single().asDocument().getInt32("code").value shouldBe code
            }
        }
    }

    test("a member answers the data commands as its version does: MongoDB 4.4 refuses let on a read and a write, 7.0 binds it") {
        for ((wire, refused) in listOf(9 to true, 21 to false)) {
            ReplicaSetSimulator.start(maxWireVersion = wire).use { rs ->
                val p = rs.members[0]
                WireClient.run(p.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}, {_id: 2}]}"), "app")
                val read = WireClient.run(p.address, BsonDocument.parse("{aggregate: 'c', pipeline: [{\$match: {\$expr: {\$eq: ['\$_id', '\$\$id']}}}], cursor: {}, let: {id: 2}}"), "app")
                val write = WireClient.run(p.address, BsonDocument.parse("{delete: 'c', deletes: [{q: {\$expr: {\$eq: ['\$_id', '\$\$id']}}, limit: 1}], let: {id: 2}}"), "app")
                if (refused) {
                    read.getString("errmsg").value shouldBe "unrecognized field 'let'"
                    write.getString("errmsg").value shouldBe "BSON field 'delete.let' is an unknown field."
                } else {
                    read.getDocument("cursor").getArray("firstBatch").single() shouldBe BsonDocument.parse("{_id: 2}")
                    write.getInt32("n").value shouldBe 1
                }
            }
        }
    }

    test("\$where: 'sleep(N) || true' matches every document; its N is what the server waits") {
        WhereSleep.millis(BsonDocument.parse("{find: 'c', filter: {\$where: 'sleep(2000) || true'}}")) shouldBe 2000L
        WhereSleep.millis(BsonDocument.parse("{update: 'c', updates: [{q: {\$where: 'sleep(5) || true'}, u: {}}]}")) shouldBe 5L
        WhereSleep.millis(BsonDocument.parse("{find: 'c', filter: {a: 1}}")) shouldBe null
        ReplicaSetSimulator.start().use { rs ->
            val p = rs.members[0]
            WireClient.run(p.address, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}]}"), "app")
            WireClient.run(p.address, BsonDocument.parse("{find: 'c', filter: {\$where: 'sleep(1) || true'}}"), "app")
                .getDocument("cursor").getArray("firstBatch").size shouldBe 1
        }
    }

    test("replSetFreeze: admin only, refused on the primary; a frozen secondary is no election handoff candidate") {
        ReplicaSetSimulator.start().use { rs ->
            rs.electionHandoff = true
            WireClient.run(rs.members[0].address, BsonDocument.parse("{replSetFreeze: 0}")).code() shouldBe 95
            WireClient.run(rs.members[1].address, BsonDocument.parse("{replSetFreeze: 0}"), "app").code() shouldBe 13
            WireClient.run(rs.members[1].address, BsonDocument.parse("{replSetFreeze: 600}")).getNumber("ok").intValue() shouldBe 1
            WireClient.run(rs.members[0].address, BsonDocument.parse("{replSetStepDown: 30}")).getNumber("ok").intValue() shouldBe 1
            rs.primary shouldBe rs.members[2] // members[1] is frozen, members[0] stepped down
            WireClient.run(rs.members[1].address, BsonDocument.parse("{replSetFreeze: 0}")).getNumber("ok").intValue() shouldBe 1
            WireClient.run(rs.members[2].address, BsonDocument.parse("{replSetStepDown: 30}")).getNumber("ok").intValue() shouldBe 1
            rs.primary shouldBe rs.members[1] // unfrozen; members[0] is still ineligible for its step-down's 30 s
        }
    }

    test("without electionHandoff a wire step-down leaves the set without a primary") {
        ReplicaSetSimulator.start().use { rs ->
            WireClient.run(rs.members[0].address, BsonDocument.parse("{replSetStepDown: 30}")).getNumber("ok").intValue() shouldBe 1
            rs.primary shouldBe null
        }
    }
})
