package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.PoolErrorLabels
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.Document

private fun insertOne(id: Int): BsonDocument = BsonDocument("insert", BsonString("c"))
    .append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(id)))))

private fun failInsertWith(code: Int): BsonDocument = BsonDocument.parse(
    """{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["insert"], errorCode: $code}}""",
)

/** SDAM error handling of application errors and monitor failures against the simulated replica set. */
class ReplicaSetErrorHandlingSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    // Polling with a one-minute heartbeat: only an immediate check can bring a server back quickly.
    val slowPolling = "serverMonitoringMode=poll&heartbeatFrequencyMS=60000&serverSelectionTimeoutMS=20000"

    test("NotWritablePrimary (4.2+): the server becomes Unknown, an immediate check follows, the pool is not cleared") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri(slowPolling)), listOf(recorder))
            try {
                val primary = rs.primary!!
                cluster.awaitTopology { it.primary?.address == primary.address }
                cluster.runCommand("test", insertOne(1))
                primary.configureFailPoint(failInsertWith(10107))
                val heartbeatsBefore = recorder.ofType<ServerHeartbeatStartedEvent>().count { it.address == primary.address }
                val e = shouldThrow<MongoCommandException> { cluster.runCommand("test", insertOne(2)) }
                e.code shouldBe 10107
                recorder.ofType<ServerDescriptionChangedEvent>()
                    .filter { it.address == primary.address && it.newDescription.type == ServerType.UNKNOWN }
                    .single().newDescription.error!! shouldContain "10107"
                // The immediate check finds it primary again long before the 60 s heartbeat.
                cluster.awaitTopology { it.primary?.address == primary.address }
                recorder.ofType<ServerHeartbeatStartedEvent>().count { it.address == primary.address } shouldBe heartbeatsBefore + 1
                recorder.ofType<PoolClearedEvent>() shouldBe emptyList()
                cluster.poolStatistics().getValue(primary.address).generation shouldBe 0
                cluster.runCommand("test", insertOne(3))["n"]!!.asNumber().intValue() shouldBe 1
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("a shutdown error (91) marks the server Unknown and clears its pool") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri(slowPolling)), listOf(recorder))
            try {
                val primary = rs.primary!!
                cluster.awaitTopology { it.primary?.address == primary.address }
                cluster.runCommand("test", insertOne(1))
                primary.configureFailPoint(failInsertWith(91))
                shouldThrow<MongoCommandException> { cluster.runCommand("test", insertOne(2)) }.code shouldBe 91
                val cleared = recorder.ofType<PoolClearedEvent>().single()
                cleared.address shouldBe primary.address
                cleared.interruptInUseConnections shouldBe false
                recorder.ofType<ServerDescriptionChangedEvent>()
                    .any { it.address == primary.address && it.newDescription.type == ServerType.UNKNOWN } shouldBe true
                cluster.awaitTopology { it.primary?.address == primary.address }
                cluster.poolStatistics().getValue(primary.address).generation shouldBe 1
                cluster.runCommand("test", insertOne(3))["n"]!!.asNumber().intValue() shouldBe 1
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("a monitor network timeout clears the pool with interruptInUseConnections; in-use operations fail fast with retryable errors") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val uri = rs.seedUri("serverMonitoringMode=poll&heartbeatFrequencyMS=500&connectTimeoutMS=1000&serverSelectionTimeoutMS=20000&minPoolSize=2")
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri), listOf(recorder))
            try {
                val primary = rs.primary!!
                cluster.awaitTopology { it.primary?.address == primary.address }
                cluster.runCommand("test", insertOne(1))
                // minPoolSize fills the pool with two idle connections, one for each in-use operation below.
                withTimeout(10.seconds) { while (cluster.poolStatistics().getValue(primary.address).availableConnections < 2) delay(10) }
                rs.partition(primary)
                val failure = coroutineScope {
                    val inUse = (1..2).map { i ->
                        async {
                            runCatching {
                                cluster.withConnection { c -> c.command("test", BsonDocument("find", BsonString("c"))) }
                            }.exceptionOrNull()
                        }
                    }
                    inUse.map { it.await() }
                }
                failure.forEach { e ->
                    val cleared = e.shouldBeInstanceOf<PoolClearedException>()
                    cleared.isRetryable shouldBe true
                    cleared.hasErrorLabel(PoolErrorLabels.RETRYABLE_WRITE_ERROR) shouldBe true
                }
                val clearEvent = recorder.ofType<PoolClearedEvent>().first { it.address == primary.address }
                clearEvent.interruptInUseConnections shouldBe true
                // Unknown, or PossiblePrimary while the secondaries still name it as primary.
                cluster.awaitTopology { it.servers.getValue(primary.address).isAvailable.not() }
                rs.heal(primary)
                cluster.awaitTopology { it.primary?.address == primary.address }
                cluster.runCommand("test", insertOne(2))["n"]!!.asNumber().intValue() shouldBe 1
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})
