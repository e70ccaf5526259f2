package dev.mooring.driver

import dev.mooring.sdam.CursorType
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.awaitCancellation
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

private fun doc(json: String) = BsonDocument.parse(json)

/** find: the options as command fields, the cold flow, limit and batchSize, cursors killed when the collector stops. */
class FindSpec : FunSpec({
    timeout = 120_000

    test("every find option is sent as its find command field") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertOne(doc("{a: 1}"))
            c.find(
                doc("{a: 1}"),
                FindOptions(
                    batchSize = 5, limit = 20, skip = 2, projection = doc("{a: 1}"), sort = doc("{a: -1}"), hint = Hint.Name("a_1"),
                    collation = doc("{locale: 'en'}"), let = doc("{x: 1}"), comment = BsonString("c"), maxTimeMS = 1000,
                    allowDiskUse = true, noCursorTimeout = true, min = doc("{a: 0}"), max = doc("{a: 9}"), returnKey = false, showRecordId = true,
                ),
            ).runCatching { toList() } // the in-memory server need not honour them all
            val sent = f.started("find").single()
            sent.getString("find").value shouldBe "items"
            sent.getDocument("filter") shouldBe doc("{a: 1}")
            sent.getInt32("batchSize").value shouldBe 5
            sent.getInt32("limit").value shouldBe 20
            sent.getInt32("skip").value shouldBe 2
            sent.getDocument("projection") shouldBe doc("{a: 1}")
            sent.getDocument("sort") shouldBe doc("{a: -1}")
            sent.getString("hint").value shouldBe "a_1"
            sent.getDocument("collation") shouldBe doc("{locale: 'en'}")
            sent.getDocument("let") shouldBe doc("{x: 1}")
            sent.getString("comment").value shouldBe "c"
            sent.getNumber("maxTimeMS").longValue() shouldBe 1000
            sent.getBoolean("allowDiskUse").value shouldBe true
            sent.getBoolean("noCursorTimeout").value shouldBe true
            sent.getDocument("min") shouldBe doc("{a: 0}")
            sent.getDocument("max") shouldBe doc("{a: 9}")
            sent.getBoolean("returnKey").value shouldBe false
            sent.getBoolean("showRecordId").value shouldBe true
            sent.containsKey("tailable") shouldBe false
            sent.containsKey("singleBatch") shouldBe false

            c.find(options = FindOptions(cursorType = CursorType.TAILABLE_AWAIT, maxAwaitTimeMS = 10)).first() // a tailable cursor never ends: take one
            f.started("find").last().let {
                it.getBoolean("tailable").value shouldBe true
                it.getBoolean("awaitData").value shouldBe true
                it.containsKey("maxTimeMS") shouldBe false
            }
        }
    }

    test("a timeoutMS (0 included) overrides the deprecated maxTimeMS option: it is not sent") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items").withTimeout(0)
            c.find(options = FindOptions(maxTimeMS = 1000)).toList()
            f.started("find").single().containsKey("maxTimeMS") shouldBe false
            c.countDocuments(options = CountOptions(maxTimeMS = 1000))
            f.started("aggregate").single().containsKey("maxTimeMS") shouldBe false
            c.findOneAndDelete(doc("{}"), FindOneAndDeleteOptions(maxTimeMS = 1000))
            f.started("findAndModify").single().containsKey("maxTimeMS") shouldBe false
            f.db.collection("items").countDocuments(options = CountOptions(maxTimeMS = 1000))
            f.started("aggregate").last().getNumber("maxTimeMS").longValue() shouldBe 1000
        }
    }

    test("a negative limit asks for a single batch; limit == batchSize sends batchSize limit + 1; limit caps the results") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertMany((1..10).map { doc("{_id: $it}") })
            c.find(options = FindOptions(limit = -3)).toList().size shouldBe 3
            f.started("find").last().let {
                it.getInt32("limit").value shouldBe 3
                it.getBoolean("singleBatch").value shouldBe true
            }
            c.find(options = FindOptions(limit = 4, batchSize = 4)).toList().size shouldBe 4
            f.started("find").last().getInt32("batchSize").value shouldBe 5
            c.find(options = FindOptions(limit = 7, batchSize = 2, sort = doc("{_id: 1}"))).map { it.getInt32("_id").value }.toList() shouldContainExactly (1..7).toList()
            f.started("getMore").last().getInt32("batchSize").value shouldBe 1
        }
    }

    test("find is cold: nothing is sent until the flow is collected, and each collection runs anew") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertOne(doc("{_id: 1}"))
            val flow = c.find(doc("{_id: 1}"))
            f.started("find") shouldBe emptyList()
            flow.toList().size shouldBe 1
            flow.toList().size shouldBe 1
            f.started("find").size shouldBe 2
        }
    }

    test("a collector that stops early or is cancelled kills the cursor") {
        WireServerFixture.withServer { f ->
            val c = f.db.collection("items")
            c.insertMany((1..10).map { doc("{_id: $it}") })
            c.find(options = FindOptions(batchSize = 2)).take(3).toList().size shouldBe 3
            val kills = f.started("killCursors")
            kills.size shouldBe 1
            kills.single().getString("killCursors").value shouldBe "items"

            coroutineScope {
                val got = CompletableDeferred<BsonDocument>()
                val job = launch {
                    c.find(options = FindOptions(batchSize = 2)).collect {
                        got.complete(it)
                        awaitCancellation()
                    }
                }
                got.await().getInt32("_id") shouldBe BsonInt32(1)
                job.cancelAndJoin()
            }
            f.started("killCursors").size shouldBe 2
            c.find(options = FindOptions(batchSize = 2)).first().getInt32("_id").value shouldBe 1
            f.started("killCursors").size shouldBe 3
        }
    }
})
