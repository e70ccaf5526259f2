package dev.mooring.java

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Flow
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * The Java facade's change stream ([JavaMongoCollection.watch]): a publisher of events that
 * resumes after a network error without losing or repeating one, and whose `cancel()` kills the
 * cursor on the server.
 */
class JavaChangeStreamSpec : FunSpec({
    timeout = 120_000

    test("a subscriber gets each insert once across a getMore connection reset; cancel kills the cursor") {
        ReplicaSetSimulator.start(dataMembers = 2, clusterTime = true).use { rs ->
            MongoClusters.create(rs.seedUri("serverSelectionTimeoutMS=5000")).use { cluster ->
                val items = cluster.getDatabase("shop").getCollection("items")
                // the getMore the fail point resets: the inserts come after it, so they reach the subscriber through the resumed cursor
                val reset = CountDownLatch(1)
                cluster.addCommandListener(object : CommandListener {
                    override fun commandFailed(event: CommandFailedEvent) {
                        if (event.commandName == "getMore") reset.countDown()
                    }
                })
                val stream = items.watch(emptyList(), ChangeStreamOptions(maxAwaitTimeMS = 50), null)
                val received = CopyOnWriteArrayList<ChangeStreamDocument<BsonDocument>>()
                val two = CountDownLatch(2)
                var subscription: Flow.Subscription? = null
                stream.subscribe(object : Flow.Subscriber<ChangeStreamDocument<BsonDocument>> {
                    override fun onSubscribe(s: Flow.Subscription) {
                        subscription = s
                        s.request(2)
                    }

                    override fun onNext(item: ChangeStreamDocument<BsonDocument>) {
                        received += item
                        two.countDown()
                    }

                    override fun onError(throwable: Throwable) = Unit

                    override fun onComplete() = Unit
                })
                // the stream is open once the server sent its first postBatchResumeToken
                while (stream.getResumeToken() == null) delay(10)
                rs.primary!!.configureFailPoint(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], closeConnection: true}}"))
                // a getMore sent before the fail point was set may still return events: insert only once the reset happened
                // (else the events could come before it, and the cancel below land in the resume, before a live cursor exists)
                withContext(Dispatchers.IO) { reset.await(30, TimeUnit.SECONDS) } shouldBe true
                items.insertOne(BsonDocument("_id", BsonInt32(1))).join()
                items.insertOne(BsonDocument("_id", BsonInt32(2))).join()
                withContext(Dispatchers.IO) { two.await(30, TimeUnit.SECONDS) } shouldBe true
                received.map { it.documentKey.shouldNotBeNull()["_id"] } shouldContainExactly listOf(BsonInt32(1), BsonInt32(2))
                // the cursor the reset left behind is the server's to time out (its killCursors, right after the reset, finds
                // the pool cleared): count the live one, the resumed cursor the events came through
                val open = rs.members.sumOf { it.openCursors }
                subscription!!.cancel()
                withTimeout(10_000) { while (rs.members.sumOf { it.openCursors } >= open) delay(10) }
                stream.getResumeToken() shouldBe received.last().resumeToken
            }
        }
    }

    test("a subscriber without demand gets no getMore sent for it: the stream's next getMore waits for its request") {
        ReplicaSetSimulator.start(dataMembers = 2, clusterTime = true).use { rs ->
            MongoClusters.create(rs.seedUri("serverSelectionTimeoutMS=5000")).use { cluster ->
                val getMores = java.util.concurrent.atomic.AtomicInteger()
                cluster.addCommandListener(object : CommandListener {
                    override fun commandStarted(event: CommandStartedEvent) {
                        if (event.commandName == "getMore") getMores.incrementAndGet()
                    }
                })
                val items = cluster.getDatabase("shop").getCollection("items")
                val stream = items.watch(emptyList(), ChangeStreamOptions(maxAwaitTimeMS = 20), null)
                val received = java.util.concurrent.LinkedBlockingQueue<ChangeStreamDocument<BsonDocument>>()
                var subscription: Flow.Subscription? = null
                stream.subscribe(object : Flow.Subscriber<ChangeStreamDocument<BsonDocument>> {
                    override fun onSubscribe(s: Flow.Subscription) {
                        subscription = s
                        s.request(1)
                    }

                    override fun onNext(item: ChangeStreamDocument<BsonDocument>) {
                        received += item
                    }

                    override fun onError(throwable: Throwable) = Unit

                    override fun onComplete() = Unit
                })
                while (stream.getResumeToken() == null) delay(10)
                items.insertOne(BsonDocument("_id", BsonInt32(1))).join()
                withContext(Dispatchers.IO) { received.poll(30, TimeUnit.SECONDS) }.shouldNotBeNull().documentKey.shouldNotBeNull()["_id"] shouldBe BsonInt32(1)
                // the demand is used up: at most the getMore already in flight when the event was delivered, none after it
                delay(100)
                val sent = getMores.get()
                delay(400) // 20 awaits of 20 ms: a stream that ignored the demand would have sent getMores all along
                getMores.get() shouldBe sent
                subscription!!.request(1)
                items.insertOne(BsonDocument("_id", BsonInt32(2))).join()
                withContext(Dispatchers.IO) { received.poll(30, TimeUnit.SECONDS) }.shouldNotBeNull().documentKey.shouldNotBeNull()["_id"] shouldBe BsonInt32(2)
                subscription!!.cancel()
            }
        }
    }
})
