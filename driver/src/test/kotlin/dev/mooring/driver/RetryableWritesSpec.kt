package dev.mooring.driver

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

private fun doc(json: String) = BsonDocument.parse(json)

/** On a replica set: single-statement writes and findAndModify are retryable writes, multi writes are not. */
class RetryableWritesSpec : FunSpec({
    timeout = 120_000

    test("insertOne, updateOne, findOneAndUpdate and single-statement bulk batches carry a txnNumber; updateMany, deleteMany do not") {
        ReplicaSetSimulator.start(dataMembers = 1).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                val c = cluster.database("test").collection("items")
                c.insertOne(doc("{_id: 1}"))
                c.updateOne(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {a: 1}}")))
                c.findOneAndUpdate(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {a: 2}}")))
                c.updateMany(doc("{}"), Update.Operators(doc("{${'$'}set: {b: 1}}")))
                c.deleteMany(doc("{_id: 5}"))
                c.bulkWrite(listOf(WriteModel.DeleteOne(doc("{_id: 6}")), WriteModel.InsertOne(doc("{_id: 2}")), WriteModel.DeleteMany(doc("{_id: 7}"))))
                val sent = recorder.ofType<CommandStartedEvent>().filter { it.commandName in setOf("insert", "update", "delete", "findAndModify") }
                sent.map { it.commandName to it.command.containsKey("txnNumber") } shouldContainExactly listOf(
                    "insert" to true, "update" to true, "findAndModify" to true, "update" to false, "delete" to false,
                    "delete" to true, "insert" to true, "delete" to false,
                )
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("a retryable error on insertOne is retried once with the same txnNumber") {
        ReplicaSetSimulator.start(dataMembers = 1).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                val c = cluster.database("test").collection("items")
                c.insertOne(doc("{_id: 0}"))
                rs.members[0].configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["insert"], errorCode: 6, errorLabels: ["RetryableWriteError"]}}"""))
                c.insertOne(doc("{_id: 1}")) shouldBe InsertOneResult.Acknowledged(org.bson.BsonInt32(1))
                val inserts = recorder.ofType<CommandStartedEvent>().filter { it.commandName == "insert" }.drop(1)
                inserts.size shouldBe 2
                inserts[0].command["txnNumber"] shouldBe inserts[1].command["txnNumber"]
                c.countDocuments() shouldBe 2
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})
