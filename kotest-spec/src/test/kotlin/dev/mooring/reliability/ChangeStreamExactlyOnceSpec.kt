package dev.mooring.reliability

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import org.bson.BsonDocument
import kotlin.random.Random
import kotlin.time.Duration.Companion.seconds

/**
 * Issue 32's reliability check: a change stream sees every insert exactly once and in order while
 * the replica set fails over and its connection is cut. One coroutine inserts [EVENTS] numbered
 * documents (retryable writes, retried by the writer on top when a write still fails) while
 * another collects `watch()`; the primary steps down every 300 ms and another member is elected;
 * at random the stream's getMore loses its connection (a failCommand `closeConnection` on getMore
 * on every member: the reset of the stream's connection; the fault proxy cannot sit in front of
 * a replica set member, whose hello names its own address); `maxAwaitTimeMS` expires on idle
 * stretches. The collector ends when cancelled, its cursor killed and no connection checked out;
 * a new collector started from a checkpointed token sees exactly the events after it. The counts
 * (events, stepdowns, resets, resumes) are printed. [EVENTS] is 2,000 by default
 * (`-Dmooring.changeStreamEvents=10000` for the full count, about five times as long).
 */
class ChangeStreamExactlyOnceSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds

    test("exactly once, in order, across elections and connection resets; then resume from a checkpoint") {
        ReplicaSetSimulator.start(dataMembers = 3, clusterTime = true).use { rs ->
            val recorder = EventRecorder()
            val uri = rs.seedUri("serverSelectionTimeoutMS=10000&heartbeatFrequencyMS=500&retryWrites=true&retryReads=true")
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri), listOf(recorder))
            try {
                val numbers = cluster.database("reliability").collection("numbers")
                var stepdowns = 0
                var resets = 0
                val stream = numbers.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 100, batchSize = 64))
                var checkpoint: BsonDocument? = null
                coroutineScope {
                    val seen = async(start = CoroutineStart.UNDISPATCHED) {
                        val ids = ArrayList<Int>(EVENTS)
                        stream.take(EVENTS).collect { e ->
                            ids += e.fullDocument!!.getInt32("_id").value
                            if (ids.size == CHECKPOINT_AT) checkpoint = e.resumeToken
                        }
                        ids
                    }
                    // the stream is open once the server sent its first postBatchResumeToken
                    while (stream.resumeToken == null) delay(10)
                    val chaos = launch {
                        val random = Random(32)
                        while (isActive) {
                            delay(300)
                            val old = rs.primary ?: continue
                            rs.stepDown(old)
                            stepdowns++
                            delay(30)
                            rs.elect(rs.members.filter { it !== old }.random(random))
                            if (random.nextInt(3) == 0) {
                                rs.members.forEach { it.configureFailPoint(BsonDocument.parse(RESET_GET_MORE)) }
                                resets++
                            }
                        }
                    }
                    for (i in 0 until EVENTS) insertOnce(numbers, i)
                    val ids = seen.await()
                    chaos.cancelAndJoin()
                    rs.members.forEach { it.clearFailPoint() }
                    // the chaos may have been cancelled between a stepdown and the election
                    if (rs.primary == null) rs.elect(rs.members.first())
                    ids shouldContainExactly (0 until EVENTS).toList()
                }
                // the collector ended: its cursor is killed (cursors left behind by a resume after a reset are the
                // server's to time out: killCursors is attempted then, its failure ignored), no connection is held
                val cursorCommands = recorder.ofType<CommandStartedEvent>().filter { it.commandName in setOf("aggregate", "getMore", "killCursors") }
                cursorCommands.last().commandName shouldBe "killCursors"
                recorder.ofType<CommandSucceededEvent>().last { it.commandName == "killCursors" }.reply.getArray("cursorsKilled").size shouldBe 1
                cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
                val resumes = recorder.ofType<CommandStartedEvent>().count { it.commandName == "aggregate" } - 1
                println("change stream exactly-once: events=$EVENTS stepdowns=$stepdowns resets=$resets resumes=$resumes")
                stepdowns shouldBeGreaterThan 0
                // a new collector from the checkpoint sees exactly the events after it
                val rest = numbers.watch(options = ChangeStreamOptions(resumeAfter = checkpoint, maxAwaitTimeMS = 100))
                    .take(EVENTS - CHECKPOINT_AT).toList().map { it.fullDocument!!.getInt32("_id").value }
                rest shouldContainExactly (CHECKPOINT_AT until EVENTS).toList()
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})

private val EVENTS: Int = System.getProperty("mooring.changeStreamEvents")?.toIntOrNull() ?: 2_000
private val CHECKPOINT_AT: Int = EVENTS / 2
private const val RESET_GET_MORE = "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], closeConnection: true}}"

/** Inserts document [i], retrying until it is in (a duplicate key: a retry of a write that had been applied). */
private suspend fun insertOnce(numbers: dev.mooring.driver.MongoCollection<BsonDocument>, i: Int) {
    while (true) {
        try {
            numbers.insertOne(BsonDocument("_id", org.bson.BsonInt32(i)))
            return
        } catch (e: dev.mooring.driver.MongoWriteException) {
            if (e.writeError.code == 11000) return
            throw e
        } catch (e: dev.mooring.events.MooringException) {
            delay(20) // no primary yet: try again
        }
    }
}
