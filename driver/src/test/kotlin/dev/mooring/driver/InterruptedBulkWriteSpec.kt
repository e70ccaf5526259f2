package dev.mooring.driver

import dev.mooring.cmap.MongoNetworkException
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.atomic.AtomicInteger

private fun doc(json: String) = BsonDocument.parse(json)

/**
 * A collection bulk write interrupted by an error other than write errors (crud.md
 * `BulkWriteException.writeResult`): the error is thrown as it is, carrying what was done before.
 */
class InterruptedBulkWriteSpec : FunSpec({
    timeout = 120_000

    /** A server whose [failing]th insert command (1-based) closes the connection without answering. */
    suspend fun withFailingInsert(failing: Int, block: suspend (WireServerFixture) -> Unit) {
        val inserts = AtomicInteger()
        WireServerFixture.withServer(limits = mapOf("maxWriteBatchSize" to 1), configure = { server ->
            server.handler = { _, _, cmd -> if (cmd.firstKey == "insert" && inserts.incrementAndGet() == failing) Reply.CloseConnection else null }
        }, block = block)
    }

    test("bulkWrite: the network error is thrown as it is, with the batches acknowledged before it") {
        withFailingInsert(3) { f ->
            val e = shouldThrow<MongoNetworkException> {
                f.db.collection("items").bulkWrite(
                    listOf(
                        WriteModel.InsertOne(doc("{_id: 1}")),
                        WriteModel.InsertOne(doc("{_id: 1}")),
                        WriteModel.InsertOne(doc("{_id: 3}")),
                        WriteModel.InsertOne(doc("{_id: 4}")),
                    ),
                    BulkWriteOptions(ordered = false),
                )
            }
            val done = e.interruptedBulkWrite!!
            done.partialResult.insertedCount shouldBe 1
            done.partialResult.insertedIds shouldBe mapOf(0 to BsonInt32(1))
            done.writeErrors.map { it.index } shouldContainExactly listOf(1)
            done.namespace shouldBe "test.items"
        }
    }

    test("insertMany interrupted by its first batch: a result of nothing applied") {
        withFailingInsert(1) { f ->
            val e = shouldThrow<MongoNetworkException> { f.db.collection("items").insertMany(listOf(doc("{_id: 1}"), doc("{_id: 2}"))) }
            e.interruptedBulkWrite!!.partialResult.insertedCount shouldBe 0
            e.interruptedBulkWrite!!.partialResult.insertedIds shouldBe emptyMap()
        }
    }

    test("a single write and an error that did not interrupt a bulk write carry none") {
        withFailingInsert(1) { f ->
            shouldThrow<MongoNetworkException> { f.db.collection("items").insertOne(doc("{_id: 1}")) }.interruptedBulkWrite shouldBe null
        }
    }
})
