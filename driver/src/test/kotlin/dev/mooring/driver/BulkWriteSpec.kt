package dev.mooring.driver

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

private fun doc(json: String) = BsonDocument.parse(json)

/** Collection bulkWrite and insertMany: batches at the server's limits, results by model index. */
class BulkWriteSpec : FunSpec({
    timeout = 120_000

    test("inserts over maxWriteBatchSize are split into several insert commands") {
        WireServerFixture.withServer(limits = mapOf("maxWriteBatchSize" to 3)) { f ->
            val c = f.db.collection("items")
            val r = c.insertMany((1..10).map { doc("{_id: $it}") })
            r.insertedIds.size shouldBe 10
            f.started("insert").map { it.getArray("documents").size } shouldContainExactly listOf(3, 3, 3, 1)
            c.countDocuments() shouldBe 10
        }
    }

    test("batches are also cut by bytes (maxBsonObjectSize / maxMessageSizeBytes)") {
        WireServerFixture.withServer(limits = mapOf("maxBsonObjectSize" to 4096)) { f ->
            val c = f.db.collection("items")
            val big = "x".repeat(1500)
            c.insertMany((1..5).map { doc("{_id: $it, s: '$big'}") })
            f.started("insert").map { it.getArray("documents").size } shouldContainExactly listOf(2, 2, 1)
        }
    }

    test("a document larger than maxBsonObjectSize fails before anything is sent") {
        WireServerFixture.withServer(limits = mapOf("maxBsonObjectSize" to 1024)) { f ->
            val c = f.db.collection("items")
            val e = shouldThrow<IllegalArgumentException> {
                c.insertMany(listOf(doc("{_id: 1}"), doc("{_id: 2, s: '${"x".repeat(2000)}'}")))
            }
            e.message shouldContain "index 1"
            e.message shouldContain "maxBsonObjectSize 1024"
            f.started("insert") shouldBe emptyList()
        }
    }

    test("mixed models: consecutive kinds share a command; counts, upserted ids by index, options sent") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            val r = c.bulkWrite(
                listOf(
                    WriteModel.InsertOne(doc("{_id: 1, n: 1}")),
                    WriteModel.InsertOne(doc("{_id: 2, n: 2}")),
                    WriteModel.UpdateOne(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {n: 10}}"))),
                    WriteModel.UpdateOne(doc("{_id: 5}"), Update.Operators(doc("{${'$'}set: {n: 5}}")), upsert = true),
                    WriteModel.ReplaceOne(doc("{_id: 2}"), doc("{n: 20}")),
                    WriteModel.DeleteMany(doc("{n: {${'$'}gte: 20}}")),
                ),
                BulkWriteOptions(bypassDocumentValidation = true, comment = BsonString("bulk")),
            ).shouldBeInstanceOf<BulkWriteResult.Acknowledged>()
            r.insertedCount shouldBe 2
            r.matchedCount shouldBe 2
            r.modifiedCount shouldBe 2
            r.upsertedCount shouldBe 1
            r.upsertedIds shouldBe mapOf(3 to BsonInt32(5))
            r.deletedCount shouldBe 1
            r.insertedIds shouldBe mapOf(0 to BsonInt32(1), 1 to BsonInt32(2))
            f.started("insert").single().let {
                it.getArray("documents").size shouldBe 2
                it.getBoolean("bypassDocumentValidation").value shouldBe true
                it.containsKey("let") shouldBe false
                it.getString("comment").value shouldBe "bulk"
            }
            f.started("update").single().let {
                it.getArray("updates").size shouldBe 3
            }
            f.started("delete").single().getArray("deletes").single().asDocument().getInt32("limit").value shouldBe 0
        }
    }

    test("let goes with the update and delete commands of a bulk write, never with insert") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            val models = listOf(
                WriteModel.InsertOne(doc("{_id: 1}")),
                WriteModel.UpdateOne(doc("{${'$'}expr: {${'$'}eq: ['${'$'}_id', '${'$'}${'$'}id']}}"), Update.Operators(doc("{${'$'}set: {n: 10}}"))),
            )
            (c.bulkWrite(models, BulkWriteOptions(let = doc("{id: 1}"))) as BulkWriteResult.Acknowledged).modifiedCount shouldBe 1
            f.started("insert").single().containsKey("let") shouldBe false
            f.started("update").single().getDocument("let") shouldBe doc("{id: 1}")
            c.bulkWrite(listOf(WriteModel.DeleteOne(doc("{${'$'}expr: {${'$'}eq: ['${'$'}_id', '${'$'}${'$'}id']}}"))), BulkWriteOptions(let = doc("{id: 1}"))).let { it as BulkWriteResult.Acknowledged }.deletedCount shouldBe 1
            f.started("delete").single().getDocument("let") shouldBe doc("{id: 1}")
            f.stored("items") shouldBe emptyList()
        }
    }

    test("one timeoutMS bounds every batch of a bulk write together, not each batch") {
        WireServerFixture.withServer(limits = mapOf("maxWriteBatchSize" to 1)) { f ->
            val c = f.db.collection("items").withTimeout(500)
            c.insertOne(doc("{_id: 0}")) // the server limits are known from here on
            f.server.configureFailPoint(
                doc("""{configureFailPoint: "failCommand", mode: {times: 2}, data: {failCommands: ["insert"], blockConnection: true, blockTimeMS: 300}}"""),
            )
            // each batch alone fits in 500 ms; both together do not
            shouldThrow<dev.mooring.sdam.MongoOperationTimeoutException> { c.insertMany(listOf(doc("{_id: 1}"), doc("{_id: 2}"))) }
        }
    }

    test("a bulk write needs a model; an ordered bulk stops at the first write error, with the model's index") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            shouldThrow<IllegalArgumentException> { c.bulkWrite(emptyList()) }
            val e = shouldThrow<MongoBulkWriteException> {
                c.bulkWrite(
                    listOf(
                        WriteModel.InsertOne(doc("{_id: 1}")),
                        WriteModel.DeleteOne(doc("{_id: 9}")),
                        WriteModel.InsertOne(doc("{_id: 1}")),
                        WriteModel.DeleteOne(doc("{_id: 1}")),
                    ),
                )
            }
            e.writeErrors.single().index shouldBe 2
            e.writeErrors.single().code shouldBe 11000
            e.partialResult.insertedCount shouldBe 1
            e.partialResult.deletedCount shouldBe 0
            f.started("delete").size shouldBe 1 // the last delete was not sent
        }
    }
})
