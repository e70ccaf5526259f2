package dev.mooring.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.EventRecorder
import dev.mooring.spec.ProseReport
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The connections-survive-step-down README prose tests on the test kit's replica set (MongoDB
 * 4.2+ rules): a cursor's getMore succeeds on its connection after the primary stepped down
 * and nothing is cleared, a "not writable primary" error keeps the pool, the shutdown errors
 * (ShutdownInProgress 91, InterruptedAtShutdown 11600) clear it, and in every case the next
 * insert succeeds on the same client. Setup as the README says: retryWrites=false, the
 * `step-down` collection dropped with majority write concern before each test (the simulator
 * creates it on the first insert).
 */
/** Closes [cluster] and checks that none of its coroutines survived. */
private suspend fun closeAndCheckNoCoroutines(cluster: MongoCluster) {
    cluster.closeSuspending()
    val job = ClusterInternals.rootJob(cluster)
    job.isCompleted shouldBe true
    job.children.toList().shouldBeEmpty()
}

class ConnectionsSurviveStepDownProseSpec : FunSpec({
    extension(ProseReport("connections-survive-step-down") { it.startsWith("connections-survive-step-down prose") })
    timeout = 120.seconds.inWholeMilliseconds

    fun insertTest() = BsonDocument("insert", BsonString("step-down"))
        .append("documents", BsonArray(listOf(BsonDocument("test", BsonInt32(1)))))

    val majority = BsonDocument("writeConcern", BsonDocument("w", BsonString("majority")))

    suspend fun prose(errorCode: Int, expectPoolCleared: Boolean) {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("retryWrites=false&serverSelectionTimeoutMS=20000")), listOf(recorder))
            try {
                val primary = rs.primary!!
                withTimeout(20.seconds) { cluster.topology.first { it.primary?.address == primary.address } }
                cluster.runCommand("step-down", BsonDocument("drop", BsonString("step-down")).apply { putAll(majority) })
                recorder.clear()
                primary.configureFailPoint(
                    BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["insert"], errorCode: $errorCode}}"""),
                )
                shouldThrow<MongoCommandException> { cluster.runCommand("step-down", insertTest()) }.code shouldBe errorCode
                if (expectPoolCleared) recorder.ofType<PoolClearedEvent>() shouldHaveSize 1
                cluster.runCommand("step-down", insertTest())["n"]!!.asNumber().intValue() shouldBe 1
                if (expectPoolCleared) {
                    recorder.ofType<PoolClearedEvent>().single().address shouldBe primary.address
                } else {
                    recorder.ofType<PoolClearedEvent>().shouldBeEmpty()
                }
            } finally {
                closeAndCheckNoCoroutines(cluster)
            }
        }
    }

    test("connections-survive-step-down prose: getMore Iteration") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("retryWrites=false&serverSelectionTimeoutMS=20000")), listOf(recorder))
            try {
                withTimeout(20.seconds) { cluster.topology.first { t -> t.primary != null && t.servers.values.count { it.type == dev.mooring.sdam.ServerType.RS_SECONDARY } == 2 } }
                cluster.runCommand("step-down", BsonDocument("drop", BsonString("step-down")).apply { putAll(majority) })
                val five = BsonArray((1..5).map { BsonDocument("x", BsonInt32(it)) })
                cluster.runCommand("step-down", BsonDocument("insert", BsonString("step-down")).append("documents", five).apply { putAll(majority) })
                recorder.clear()
                // the cursor's connection is held through the step-down, as a cursor holds its server
                cluster.withConnection(ReadPreference.PRIMARY) { c ->
                    val first = c.command("step-down", BsonDocument("find", BsonString("step-down")).append("batchSize", BsonInt32(2))).getDocument("cursor")
                    first.getArray("firstBatch").size shouldBe 2
                    val id = first.getNumber("id").longValue()
                    cluster.runCommand("admin", BsonDocument("replSetFreeze", BsonInt32(0)), ReadPreference.SECONDARY).getNumber("ok").intValue() shouldBe 1
                    cluster.runCommand("admin", BsonDocument("replSetStepDown", BsonInt32(30)).append("force", org.bson.BsonBoolean.TRUE)).getNumber("ok").intValue() shouldBe 1
                    val next = c.command("step-down", BsonDocument("getMore", BsonInt64(id)).append("collection", BsonString("step-down")).append("batchSize", BsonInt32(2)))
                    next.getDocument("cursor").getArray("nextBatch").size shouldBe 2
                }
                recorder.ofType<PoolClearedEvent>().shouldBeEmpty()
            } finally {
                closeAndCheckNoCoroutines(cluster)
            }
        }
    }

    test("connections-survive-step-down prose: Not Primary - Keep Connection Pool") {
        prose(10107, expectPoolCleared = false)
    }

    test("connections-survive-step-down prose: Shutdown in progress - Reset Connection Pool") {
        prose(91, expectPoolCleared = true)
    }

    test("connections-survive-step-down prose: Interrupted at shutdown - Reset Connection Pool") {
        prose(11600, expectPoolCleared = true)
    }
})
