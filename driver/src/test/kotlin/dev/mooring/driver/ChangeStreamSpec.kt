package dev.mooring.driver

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import org.bson.BsonDocument

@Serializable
data class Item(@SerialName("_id") val id: Int, val name: String, val qty: Int = 0)

/**
 * change-streams.md on the test kit's replica set: typed events, one resume per resumable error
 * (network error, labelled server error) without losing or repeating an event, non-resumable
 * errors surfacing, the cursor killed when the collector stops, checkpointing with the resume token.
 */
class ChangeStreamSpec : FunSpec({
    timeout = 120_000

    suspend fun withSet(block: suspend (ReplicaSetSimulator, MongoCluster, EventRecorder) -> Unit) {
        ReplicaSetSimulator.start(dataMembers = 2, clusterTime = true).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                block(rs, cluster, recorder)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    fun EventRecorder.aggregates(): List<BsonDocument> = ofType<CommandStartedEvent>().filter { it.commandName == "aggregate" }.map { it.command }

    test("typed events: insert, update with its description, replace, delete, in order") {
        withSet { _, cluster, _ ->
            val items = cluster.database("shop").collection<Item>("items")
            items.insertOne(Item(0, "seed"))
            coroutineScope {
                val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50))
                val events = async(start = CoroutineStart.UNDISPATCHED) { stream.take(4).toList() }
                // the stream opens when collected: wait for its aggregate before writing
                while (stream.resumeToken == null && !events.isCompleted) kotlinx.coroutines.delay(10)
                items.insertOne(Item(1, "apple"))
                items.updateOne(BsonDocument.parse("{_id: 1}"), Update.Operators(BsonDocument.parse("{\$set: {qty: 5}}")))
                items.replaceOne(BsonDocument.parse("{_id: 1}"), Item(1, "pear", 2))
                items.deleteOne(BsonDocument.parse("{_id: 1}"))
                val got = events.await()
                got.map { it.operationType } shouldContainExactly listOf("insert", "update", "replace", "delete")
                got[0].fullDocument shouldBe Item(1, "apple")
                got[0].ns shouldBe ChangeStreamNamespace("shop", "items")
                got[1].updateDescription.shouldNotBeNull().updatedFields shouldBe BsonDocument.parse("{qty: 5}")
                got[2].fullDocument shouldBe Item(1, "pear", 2)
                got[3].documentKey shouldBe BsonDocument.parse("{_id: 1}")
                stream.resumeToken shouldBe got[3].resumeToken
            }
        }
    }

    fun failPoint(json: String) = BsonDocument.parse(json)

    test("a network error on getMore is resumed once, after the cached token: no event lost or repeated") {
        withSet { rs, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items")
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50))
            val cursor = stream.cursor()
            val opened = stream.resumeToken.shouldNotBeNull()
            items.insertOne(Item(1, "a"))
            items.insertOne(Item(2, "b"))
            rs.primary!!.configureFailPoint(failPoint("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], closeConnection: true}}"))
            cursor.next()!!.fullDocument shouldBe Item(1, "a")
            cursor.next()!!.fullDocument shouldBe Item(2, "b")
            cursor.close()
            val aggregates = recorder.aggregates()
            aggregates.size shouldBe 2
            aggregates[1].getArray("pipeline")[0].asDocument().getDocument("\$changeStream") shouldBe BsonDocument("resumeAfter", opened)
        }
    }

    test("a server error labelled ResumableChangeStreamError is resumed once per error, consecutive ones too") {
        withSet { rs, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items")
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50, batchSize = 1))
            val cursor = stream.cursor()
            (1..3).forEach { items.insertOne(Item(it, "n$it")) }
            rs.primary!!.configureFailPoint(failPoint("{configureFailPoint: 'failGetMoreAfterCursorCheckout', mode: {times: 2}, data: {errorCode: 6}}"))
            (1..3).map { cursor.next()!!.fullDocument!!.id } shouldContainExactly listOf(1, 2, 3)
            cursor.close()
            recorder.aggregates().size shouldBe 3
        }
    }

    test("a server error that is not resumable surfaces, without a resume") {
        withSet { rs, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items")
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50))
            items.insertOne(Item(0, "seed"))
            rs.primary!!.configureFailPoint(failPoint("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], errorCode: 6}}"))
            val e = shouldThrow<MongoCommandException> { stream.first() }
            e.code shouldBe 6
            recorder.aggregates().size shouldBe 1
            rs.primary!!.openCursors shouldBe 0
        }
    }

    test("a collector that stops kills the cursor on the server") {
        withSet { rs, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items")
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50, startAtOperationTime = org.bson.BsonTimestamp(0, 0)))
            items.insertOne(Item(1, "a"))
            stream.first().fullDocument shouldBe Item(1, "a")
            recorder.ofType<CommandStartedEvent>().count { it.commandName == "killCursors" } shouldBe 1
            rs.primary!!.openCursors shouldBe 0
        }
    }

    test("a checkpointed resume token starts a new stream after the events it covers; collecting a stream again resumes it") {
        withSet { _, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items")
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 50))
            val cursor = stream.cursor()
            (1..3).forEach { items.insertOne(Item(it, "n$it")) }
            cursor.next()!!.fullDocument!!.id shouldBe 1
            cursor.close()
            val checkpoint = stream.resumeToken.shouldNotBeNull()
            items.watch(options = ChangeStreamOptions(resumeAfter = checkpoint, maxAwaitTimeMS = 50)).take(2).toList().map { it.fullDocument!!.id } shouldContainExactly listOf(2, 3)
            // the same stream collected again resumes after the token it cached
            stream.first().fullDocument!!.id shouldBe 2
            recorder.aggregates().last().getArray("pipeline")[0].asDocument().getDocument("\$changeStream") shouldBe BsonDocument("resumeAfter", checkpoint)
        }
    }

    test("maxAwaitTimeMS not below a positive timeoutMS is refused when the stream is opened, before anything is sent") {
        withSet { _, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items").withTimeout(100)
            shouldThrow<IllegalArgumentException> { items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 100)).first() }
            recorder.aggregates().size shouldBe 0
        }
    }

    test("timeoutMS: the opening aggregate and each next get timeoutMS each; a next that times out leaves the stream to resume") {
        // Each blocked command takes 600 ms of the 1,000: together (1,200 ms) they would exceed one shared timeoutMS,
        // and each keeps 400 ms of margin on a loaded machine (with 250 of 400 the margin was too thin and the case failed at load 6).
        withSet { rs, cluster, recorder ->
            val items = cluster.database("shop").collection<Item>("items").withTimeout(1_000)
            rs.primary!!.configureFailPoint(failPoint("{configureFailPoint: 'failCommand', mode: {times: 2}, data: {failCommands: ['aggregate', 'getMore'], blockConnection: true, blockTimeMS: 600}}"))
            val stream = items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 1, batchSize = 2))
            val cursor = stream.cursor()
            cursor.tryNext() shouldBe null
            rs.primary!!.configureFailPoint(failPoint("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], blockConnection: true, blockTimeMS: 1500}}"))
            shouldThrow<dev.mooring.sdam.MongoOperationTimeoutException> { cursor.next() }
            items.insertOne(Item(1, "a"))
            // the next call resumes first (an aggregate), then reads on
            cursor.next()!!.fullDocument shouldBe Item(1, "a")
            cursor.close()
            recorder.aggregates().size shouldBe 2
        }
    }
})
