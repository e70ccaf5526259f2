package dev.mooring.driver

import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

private fun doc(json: String) = BsonDocument.parse(json)

/** Every collection operation's result, the write errors as typed errors, crud.md's validation. */
class CrudOperationsSpec : FunSpec({
    timeout = 120_000

    test("insertMany, countDocuments, estimatedDocumentCount, distinct, aggregate") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            val r = c.insertMany((1..5).map { doc("{_id: $it, kind: '${if (it % 2 == 0) "even" else "odd"}'}") })
            r shouldBe InsertManyResult.Acknowledged((0..4).associateWith { BsonInt32(it + 1) })
            c.countDocuments() shouldBe 5
            c.countDocuments(doc("{kind: 'odd'}")) shouldBe 3
            c.countDocuments(options = CountOptions(skip = 1, limit = 2)) shouldBe 2
            c.countDocuments(doc("{kind: 'none'}")) shouldBe 0
            f.started("aggregate").last().getArray("pipeline") shouldBe doc(
                """{p: [{${'$'}match: {kind: 'none'}}, {${'$'}group: {_id: 1, n: {${'$'}sum: 1}}}]}""",
            ).getArray("p")
            c.estimatedDocumentCount() shouldBe 5
            f.started("count").single() .getString("count").value shouldBe "items"
            c.distinct("kind") shouldContainExactlyInAnyOrder listOf(BsonString("odd"), BsonString("even"))
            c.aggregate(listOf(doc("{${'$'}match: {kind: 'even'}}"))).map { it.getInt32("_id").value }.toList() shouldContainExactly listOf(2, 4)
        }
    }

    test("updateOne, updateMany (documents and pipelines), replaceOne, upsert: results") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertMany((1..3).map { doc("{_id: $it, n: 0}") })
            c.updateOne(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {n: 5}}"))) shouldBe UpdateResult.Acknowledged(1, 1, null)
            c.updateMany(doc("{}"), Update.Operators(doc("{${'$'}inc: {n: 1}}"))) shouldBe UpdateResult.Acknowledged(3, 3, null)
            // a pipeline is sent as the statement's u
            c.updateMany(doc("{_id: {${'$'}gt: 2}}"), Update.Pipeline(listOf(doc("{${'$'}set: {p: true}}")))) shouldBe UpdateResult.Acknowledged(1, 1, null)
            f.started("update").last().getArray("updates")[0].asDocument().getArray("u") shouldBe org.bson.BsonArray(listOf(doc("{${'$'}set: {p: true}}")))
            c.replaceOne(doc("{_id: 2}"), doc("{_id: 2, r: 1}")) shouldBe UpdateResult.Acknowledged(1, 1, null)
            c.updateOne(doc("{_id: 9}"), Update.Operators(doc("{${'$'}set: {n: 9}}")), UpdateOptions(upsert = true)) shouldBe
                UpdateResult.Acknowledged(0, 0, BsonInt32(9))
            f.stored("items").map { it.toJson() } shouldContainExactly listOf(
                """{"_id": 1, "n": 6}""", """{"_id": 2, "r": 1}""", """{"_id": 3, "n": 1, "p": true}""", """{"_id": 9, "n": 9}""",
            )
            f.started("update").first { it.getArray("updates")[0].asDocument().containsKey("multi") }
                .getArray("updates")[0].asDocument().getBoolean("multi").value shouldBe true
        }
    }

    test("deleteOne, deleteMany, findOneAndUpdate/Replace/Delete with returnDocument, upsert, projection, sort") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertMany((1..4).map { doc("{_id: $it, n: $it}") })
            c.findOneAndUpdate(doc("{}"), Update.Operators(doc("{${'$'}inc: {n: 10}}")), FindOneAndUpdateOptions(sort = doc("{n: -1}"))) shouldBe doc("{_id: 4, n: 4}")
            c.findOneAndUpdate(
                doc("{_id: 3}"), Update.Operators(doc("{${'$'}inc: {n: 10}}")),
                FindOneAndUpdateOptions(returnDocument = ReturnDocument.AFTER, projection = doc("{n: 1, _id: 0}")),
            ) shouldBe doc("{n: 13}")
            c.findOneAndUpdate(doc("{_id: 7}"), Update.Operators(doc("{${'$'}set: {n: 7}}")), FindOneAndUpdateOptions(upsert = true, returnDocument = ReturnDocument.AFTER)) shouldBe
                doc("{_id: 7, n: 7}")
            c.findOneAndReplace(doc("{_id: 2}"), doc("{_id: 2, r: true}"), FindOneAndReplaceOptions(returnDocument = ReturnDocument.AFTER)) shouldBe doc("{_id: 2, r: true}")
            c.findOneAndDelete(doc("{_id: 1}")) shouldBe doc("{_id: 1, n: 1}")
            c.findOneAndDelete(doc("{_id: 100}")) shouldBe null
            f.started("findAndModify").first().let {
                it.getDocument("sort") shouldBe doc("{n: -1}")
                it.getBoolean("new").value shouldBe false
            }
            c.deleteOne(doc("{_id: 2}")) shouldBe DeleteResult.Acknowledged(1)
            c.deleteMany(doc("{}")) shouldBe DeleteResult.Acknowledged(3)
            c.countDocuments() shouldBe 0
        }
    }

    test("a duplicate key is a MongoWriteException (insertOne) and a MongoBulkWriteException with the index (insertMany)") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertOne(doc("{_id: 1}"))
            val single = shouldThrow<MongoWriteException> { c.insertOne(doc("{_id: 1}")) }
            single.code shouldBe 11000
            single.writeError.index shouldBe 0
            single.namespace shouldBe "test.items"

            val ordered = shouldThrow<MongoBulkWriteException> { c.insertMany(listOf(doc("{_id: 2}"), doc("{_id: 1}"), doc("{_id: 3}"))) }
            ordered.writeErrors.map { it.index to it.code } shouldContainExactly listOf(1 to 11000)
            ordered.partialResult.insertedCount shouldBe 1
            ordered.partialResult.insertedIds shouldBe mapOf(0 to BsonInt32(2))
            c.countDocuments() shouldBe 2 // ordered: _id 3 was not inserted

            val unordered = shouldThrow<MongoBulkWriteException> {
                c.insertMany(listOf(doc("{_id: 1}"), doc("{_id: 4}"), doc("{_id: 2}")), InsertManyOptions(ordered = false))
            }
            unordered.writeErrors.map { it.index } shouldContainExactly listOf(0, 2)
            unordered.partialResult.insertedCount shouldBe 1
            unordered.partialResult.insertedIds shouldBe mapOf(1 to BsonInt32(4))
        }
    }

    test("a writeConcernError is a MongoWriteConcernException with the result (single writes, findAndModify) or in the MongoBulkWriteException") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            fun failNext(command: String) = f.server.configureFailPoint(
                doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["$command"], writeConcernError: {code: 64, codeName: "WriteConcernFailed", errmsg: "timed out", errInfo: {wtimeout: true}}}}"""),
            )
            failNext("insert")
            val single = shouldThrow<MongoWriteConcernException> { c.insertOne(doc("{_id: 1}")) }
            single.code shouldBe 64
            single.writeConcernError.codeName shouldBe "WriteConcernFailed"
            single.writeConcernError.details shouldBe doc("{wtimeout: true}")
            single.result shouldBe InsertOneResult.Acknowledged(BsonInt32(1))

            failNext("update")
            shouldThrow<MongoWriteConcernException> { c.updateOne(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {a: 1}}"))) }
                .result shouldBe UpdateResult.Acknowledged(1, 1, null)

            failNext("insert")
            val bulk = shouldThrow<MongoBulkWriteException> { c.insertMany(listOf(doc("{_id: 2}"), doc("{_id: 3}"))) }
            bulk.writeErrors shouldBe emptyList()
            bulk.writeConcernErrors.single().code shouldBe 64
            bulk.partialResult.insertedCount shouldBe 2

            failNext("findAndModify")
            shouldThrow<MongoWriteConcernException> { c.findOneAndDelete(doc("{_id: 3}")) }.result shouldBe null
            c.countDocuments() shouldBe 2
        }
    }

    test("update documents must start with an operator, replacements must not; nothing is sent") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            shouldThrow<IllegalArgumentException> { c.updateOne(doc("{}"), Update.Operators(doc("{a: 1}"))) }.message shouldContain "update operators"
            shouldThrow<IllegalArgumentException> { c.updateMany(doc("{}"), Update.Operators(doc("{}"))) }
            shouldThrow<IllegalArgumentException> { c.replaceOne(doc("{}"), doc("{${'$'}set: {a: 1}}")) }.message shouldContain "replacement"
            shouldThrow<IllegalArgumentException> { c.findOneAndReplace(doc("{}"), doc("{${'$'}set: {a: 1}}")) }
            shouldThrow<IllegalArgumentException> { c.findOneAndUpdate(doc("{}"), Update.Operators(doc("{a: 1}"))) }
            f.started("update") shouldBe emptyList()
            f.started("findAndModify") shouldBe emptyList()
        }
    }

    test("w:0 writes report Unacknowledged and send the write concern") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items").withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(0)))
            c.insertOne(doc("{_id: 1}")).shouldBeInstanceOf<InsertOneResult.Unacknowledged>().insertedId shouldBe BsonInt32(1)
            c.updateOne(doc("{_id: 1}"), Update.Operators(doc("{${'$'}set: {a: 1}}"))) shouldBe UpdateResult.Unacknowledged
            c.deleteMany(doc("{}")) shouldBe DeleteResult.Unacknowledged
            f.started("insert").single().getDocument("writeConcern") shouldBe doc("{w: 0}")
        }
    }

    test("a hint on an unacknowledged update, delete or findAndModify fails before sending on a 4.2 server, and is sent on 4.4+") {
        WireServerFixture.withServer(configure = { it.maxWireVersion = 8 }) { f ->
            val c = f.db.collection("items").withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(0)))
            shouldThrow<IllegalArgumentException> { c.updateOne(doc("{}"), Update.Operators(doc("{${'$'}set: {a: 1}}")), UpdateOptions(hint = Hint.Name("a_1"))) }
            shouldThrow<IllegalArgumentException> { c.deleteMany(doc("{}"), DeleteOptions(hint = Hint.Keys(doc("{a: 1}")))) }
            shouldThrow<IllegalArgumentException> { c.findOneAndDelete(doc("{}"), FindOneAndDeleteOptions(hint = Hint.Name("a_1"))) }
            f.started("update") + f.started("delete") + f.started("findAndModify") shouldBe emptyList()
            c.deleteMany(doc("{}")) shouldBe DeleteResult.Unacknowledged // without a hint it is fine
        }
        WireServerFixture.withServer(configure = { it.maxWireVersion = 9 }) { f ->
            val c = f.db.collection("items").withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(0)))
            c.deleteMany(doc("{}"), DeleteOptions(hint = Hint.Name("a_1"))) shouldBe DeleteResult.Unacknowledged
            f.started("delete").single().getArray("deletes")[0].asDocument().getString("hint").value shouldBe "a_1"
        }
    }

    test("the cluster's readConcernLevel-free default and a collection read concern / write concern override") {
        WireServerFixture.withServer(uriOptions = "&w=majority") { f ->
            val c = f.db.collection("items")
            c.insertOne(doc("{_id: 1}"))
            f.started("insert").single().getDocument("writeConcern") shouldBe doc("{w: 'majority'}")
            c.find().toList()
            f.started("find").single().containsKey("readConcern") shouldBe false
            c.withReadConcern(ReadConcern.MAJORITY).find().toList()
            f.started("find").last().getDocument("readConcern") shouldBe doc("{level: 'majority'}")
            c.withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(1), journal = true)).deleteOne(doc("{_id: 1}"))
            f.started("delete").single().getDocument("writeConcern") shouldBe doc("{w: 1, j: true}")
        }
    }
})
