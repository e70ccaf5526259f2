package dev.mooring.driver

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.serialization.Serializable
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

private fun doc(json: String) = BsonDocument.parse(json)

@Serializable
data class Pet(val _id: Int, val name: String)

private fun bson(ns: String, model: WriteModel<BsonDocument>) = ClientNamespacedWriteModel.of(ns, model)

/** The client bulk write (bulk-write.md): one bulkWrite command per batch on admin, results by model index. */
class ClientBulkWriteSpec : FunSpec({
    timeout = 120_000

    suspend fun withServer(limits: Map<String, Int> = emptyMap(), configure: (dev.mooring.testkit.server.WireServer) -> Unit = {}, block: suspend (WireServerFixture) -> Unit) =
        WireServerFixture.withServer(limits = limits, configure = { it.maxWireVersion = 25; configure(it) }, block = block)

    test("mixed namespaces and typed documents: one command, nsInfo once per namespace, verbose results by model index") {
        withServer { f ->
            val pets = f.db.collection<Pet>("pets")
            val r = f.cluster.bulkWrite(
                listOf(
                    ClientNamespacedWriteModel.of(pets, WriteModel.InsertOne(Pet(1, "Rex"))),
                    bson("test.items", WriteModel.InsertOne(doc("{x: 1}"))),
                    bson("test.items", WriteModel.UpdateOne(doc("{x: 1}"), Update.Operators(doc("{\$set: {x: 2}}")))),
                    bson("other.things", WriteModel.UpdateOne(doc("{_id: 9}"), Update.Operators(doc("{\$set: {y: 1}}")), upsert = true)),
                    ClientNamespacedWriteModel.of(pets, WriteModel.ReplaceOne(doc("{_id: 1}"), Pet(1, "Max"))),
                    bson("test.items", WriteModel.DeleteMany(doc("{x: 5}"))),
                ),
                ClientBulkWriteOptions(verboseResults = true, comment = BsonString("c")),
            )
            r.shouldBeInstanceOf<ClientBulkWriteResult.Acknowledged>()
            listOf(r.insertedCount, r.upsertedCount, r.matchedCount, r.modifiedCount, r.deletedCount) shouldContainExactly listOf(2L, 1L, 2L, 2L, 0L)
            val v = r.verboseResults!!
            v.insertResults.keys.toList() shouldContainExactly listOf(0, 1)
            v.insertResults[0] shouldBe ClientInsertOneResult(BsonInt32(1))
            v.updateResults[3] shouldBe ClientUpdateResult(1, 0, BsonInt32(9))
            v.updateResults[4] shouldBe ClientUpdateResult(1, 1, null)
            v.deleteResults[5] shouldBe ClientDeleteResult(0)
            val sent = f.started("bulkWrite").single()
            sent.getString("\$db").value shouldBe "admin"
            sent["errorsOnly"] shouldBe org.bson.BsonBoolean.FALSE
            sent["ordered"] shouldBe org.bson.BsonBoolean.TRUE
            sent["comment"] shouldBe BsonString("c")
            sent.getArray("nsInfo").map { it.asDocument().getString("ns").value } shouldContainExactly listOf("test.pets", "test.items", "other.things")
            sent.getArray("ops").map { it.asDocument().firstKey to it.asDocument().getNumber(it.asDocument().firstKey).intValue() } shouldContainExactly
                listOf("insert" to 0, "insert" to 1, "update" to 1, "update" to 2, "update" to 0, "delete" to 1)
            // the generated _id comes first in the document
            sent.getArray("ops")[1].asDocument().getDocument("document").firstKey shouldBe "_id"
            f.stored("pets") shouldBe listOf(doc("{_id: 1, name: 'Max'}"))
        }
    }

    test("summary results by default (errorsOnly: true), no verbose results") {
        withServer { f ->
            val r = f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}")))))
            (r as ClientBulkWriteResult.Acknowledged).verboseResults shouldBe null
            r.insertedCount shouldBe 1
            f.started("bulkWrite").single()["errorsOnly"] shouldBe org.bson.BsonBoolean.TRUE
        }
    }

    test("split at maxWriteBatchSize; each command's nsInfo holds only the namespaces its ops use") {
        withServer(limits = mapOf("maxWriteBatchSize" to 2)) { f ->
            val models = listOf("a", "a", "b", "b", "c").mapIndexed { i, c -> bson("test.$c", WriteModel.InsertOne(doc("{_id: $i}"))) }
            val r = f.cluster.bulkWrite(models, ClientBulkWriteOptions(verboseResults = true)) as ClientBulkWriteResult.Acknowledged
            r.insertedCount shouldBe 5
            r.verboseResults!!.insertResults.keys.toList() shouldContainExactly listOf(0, 1, 2, 3, 4)
            val sent = f.started("bulkWrite")
            sent.map { it.getArray("ops").size } shouldContainExactly listOf(2, 2, 1)
            sent.map { c -> c.getArray("nsInfo").map { it.asDocument().getString("ns").value } } shouldContainExactly listOf(listOf("test.a"), listOf("test.b"), listOf("test.c"))
        }
    }

    test("split by bytes: the command stays within maxBsonObjectSize; a write that cannot fit fails before anything is sent") {
        withServer(limits = mapOf("maxBsonObjectSize" to 4096)) { f ->
            val big = "x".repeat(1500)
            f.cluster.bulkWrite((1..5).map { bson("test.items", WriteModel.InsertOne(doc("{_id: $it, s: '$big'}"))) })
            f.started("bulkWrite").map { it.getArray("ops").size } shouldContainExactly listOf(2, 2, 1)
            val e = shouldThrow<IllegalArgumentException> {
                f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 9, s: '${"y".repeat(5000)}'}")))))
            }
            e.message shouldContain "index 0"
            f.started("bulkWrite").size shouldBe 3
        }
    }

    test("unacknowledged: ordered and verboseResults are client-side errors; unordered returns Unacknowledged") {
        withServer { f ->
            val w0 = WriteConcern(WriteAcknowledgement.Nodes(0))
            val model = listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))))
            shouldThrow<IllegalArgumentException> { f.cluster.bulkWrite(model, ClientBulkWriteOptions(writeConcern = w0)) }.message shouldBe
                "Cannot request unacknowledged write concern and ordered writes"
            shouldThrow<IllegalArgumentException> { f.cluster.bulkWrite(model, ClientBulkWriteOptions(ordered = false, writeConcern = w0, verboseResults = true)) }.message shouldBe
                "Cannot request unacknowledged write concern and verbose results"
            f.started("bulkWrite") shouldBe emptyList()
            f.cluster.bulkWrite(model, ClientBulkWriteOptions(ordered = false, writeConcern = w0)) shouldBe ClientBulkWriteResult.Unacknowledged
            f.started("bulkWrite").single().getDocument("writeConcern") shouldBe doc("{w: 0}")
        }
    }

    test("update and replacement documents are validated and an empty list refused before anything is sent") {
        withServer { f ->
            shouldThrow<IllegalArgumentException> { f.cluster.bulkWrite(emptyList()) }
            shouldThrow<IllegalArgumentException> { f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.UpdateOne(doc("{}"), Update.Operators(doc("{x: 1}")))))) }
            shouldThrow<IllegalArgumentException> { f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.ReplaceOne(doc("{}"), doc("{\$set: {x: 1}}"))))) }
            shouldThrow<IllegalArgumentException> { ClientNamespacedWriteModel.of("nodot", WriteModel.DeleteOne(doc("{}"))) }
            f.started("bulkWrite") shouldBe emptyList()
        }
    }

    test("an ordered write error: ClientBulkWriteException with the error by model index and the partial result") {
        withServer { f ->
            val e = shouldThrow<ClientBulkWriteException> {
                f.cluster.bulkWrite(
                    listOf(
                        bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))),
                        bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))),
                        bson("test.items", WriteModel.InsertOne(doc("{_id: 2}"))),
                    ),
                )
            }
            e.writeErrors.keys.toList() shouldContainExactly listOf(1)
            e.writeErrors.getValue(1).code shouldBe 11000
            e.error shouldBe null
            e.partialResult!!.insertedCount shouldBe 1
            f.stored("items").size shouldBe 1
        }
    }

    test("an unordered bulk write goes on after a write error and reports each one") {
        withServer(limits = mapOf("maxWriteBatchSize" to 2)) { f ->
            val e = shouldThrow<ClientBulkWriteException> {
                f.cluster.bulkWrite(
                    listOf(1, 1, 2, 2).map { bson("test.items", WriteModel.InsertOne(doc("{_id: $it}"))) },
                    ClientBulkWriteOptions(ordered = false),
                )
            }
            e.writeErrors.keys.toList() shouldContainExactly listOf(1, 3)
            e.partialResult!!.insertedCount shouldBe 2
        }
    }

    test("a command error before any result is thrown as it is; after results it is the error of a ClientBulkWriteException") {
        val calls = java.util.concurrent.atomic.AtomicInteger()
        withServer(limits = mapOf("maxWriteBatchSize" to 1), configure = { server ->
            server.handler = { _, _, cmd ->
                // the first and the third bulkWrite fail: the first call fails at once, the second after one command
                if (cmd.firstKey == "bulkWrite" && calls.incrementAndGet() % 2 == 1) Reply.Document(doc("{ok: 0, code: 8, codeName: 'UnknownError', errmsg: 'boom'}")) else null
            }
        }) { f ->
            shouldThrow<MongoCommandException> { f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))))) }.code shouldBe 8
            val e = shouldThrow<ClientBulkWriteException> {
                f.cluster.bulkWrite(listOf(2, 3).map { bson("test.items", WriteModel.InsertOne(doc("{_id: $it}"))) })
            }
            e.error.shouldBeInstanceOf<MongoCommandException>().code shouldBe 8
            e.cause shouldBe e.error
            e.partialResult!!.insertedCount shouldBe 1
        }
    }

    test("a results cursor left open is drained with getMore in the same session") {
        withServer(configure = { server ->
            server.handler = { _, _, cmd ->
                when (cmd.firstKey) {
                    "bulkWrite" -> Reply.Document(doc("{cursor: {id: {\$numberLong: '77'}, ns: 'admin.\$cmd.bulkWrite', firstBatch: [{ok: 1, idx: 0, n: 1}]}, nErrors: 1, nInserted: 1, nUpserted: 0, nMatched: 0, nModified: 0, nDeleted: 0, ok: 1}"))
                    "getMore" -> Reply.Document(doc("{cursor: {id: {\$numberLong: '0'}, ns: 'admin.\$cmd.bulkWrite', nextBatch: [{ok: 0, idx: 1, code: 11000, errmsg: 'dup'}]}, ok: 1}"))
                    else -> null
                }
            }
        }) { f ->
            val e = shouldThrow<ClientBulkWriteException> {
                f.cluster.bulkWrite(listOf(1, 1).map { bson("test.items", WriteModel.InsertOne(doc("{_id: $it}"))) }, ClientBulkWriteOptions(ordered = false, verboseResults = true))
            }
            e.writeErrors.keys.toList() shouldContainExactly listOf(1)
            e.partialResult!!.verboseResults!!.insertResults.keys.toList() shouldContainExactly listOf(0)
            val getMore = f.started("getMore").single()
            getMore["getMore"] shouldBe org.bson.BsonInt64(77)
            getMore["collection"] shouldBe BsonString("\$cmd.bulkWrite")
            getMore["lsid"] shouldBe f.started("bulkWrite").single()["lsid"]
        }
    }

    test("a server older than MongoDB 8.0 is refused before anything is sent") {
        WireServerFixture.withServer { f ->
            shouldThrow<IllegalStateException> { f.cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))))) }.message shouldContain "8.0"
            f.started("bulkWrite") shouldBe emptyList()
        }
    }

    test("on a replica set a command is a retryable write unless it holds an updateMany or deleteMany") {
        ReplicaSetSimulator.start(dataMembers = 1, maxWireVersion = 25).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))), bson("test.items", WriteModel.UpdateOne(doc("{_id: 1}"), Update.Operators(doc("{\$set: {a: 1}}"))))))
                cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 2}"))), bson("test.items", WriteModel.DeleteMany(doc("{_id: 5}")))))
                val sent = recorder.ofType<CommandStartedEvent>().filter { it.commandName == "bulkWrite" }
                sent.map { it.command.containsKey("txnNumber") } shouldContainExactly listOf(true, false)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("a retryable error is retried once with the same txnNumber") {
        ReplicaSetSimulator.start(dataMembers = 1, maxWireVersion = 25).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                rs.members[0].configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["bulkWrite"], errorCode: 6, errorLabels: ["RetryableWriteError"]}}"""))
                val r = cluster.bulkWrite(listOf(bson("test.items", WriteModel.InsertOne(doc("{_id: 1}"))))) as ClientBulkWriteResult.Acknowledged
                r.insertedCount shouldBe 1
                val sent = recorder.ofType<CommandStartedEvent>().filter { it.commandName == "bulkWrite" }
                sent.size shouldBe 2
                sent[0].command["txnNumber"] shouldBe sent[1].command["txnNumber"]
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})
