package dev.mooring.sdam.cluster

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrowAny
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.filterIsInstance
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32

/** The CMAP prose tests (cmap-tests-README.md "Prose Tests" 1–5), each a named test. */
class CmapProseSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds
    val options = "maxPoolSize=7&minPoolSize=1&maxIdleTimeMS=60000&maxConnecting=3&waitQueueTimeoutMS=4000"
    val expected = ConnectionPoolSettings(maxPoolSize = 7, minPoolSize = 1, maxIdleTimeMS = 60_000, maxConnecting = 3, waitQueueTimeoutMS = 4_000)

    fun ConnectionPoolSettings.options() = listOf(maxPoolSize, minPoolSize, maxIdleTimeMS, maxConnecting, waitQueueTimeoutMS)

    test("CMAP prose 1: all ConnectionPoolOptions are specified at the client level (MongoClusterSettings.pool)") {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val settings = MongoClusterSettings.fromUri("mongodb://${server.address}/").copy(pool = expected)
            val cluster = MongoCluster(settings, listOf(recorder))
            try {
                withTimeout(20.seconds) { while (recorder.ofType<PoolCreatedEvent>().isEmpty()) delay(20) }
                recorder.ofType<PoolCreatedEvent>().single().settings.options() shouldBe expected.options()
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("CMAP prose 2: every pool a client creates has the same ConnectionPoolOptions") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri(options)), listOf(recorder))
            try {
                withTimeout(20.seconds) { while (recorder.ofType<PoolCreatedEvent>().size < 3) delay(20) }
                val created = recorder.ofType<PoolCreatedEvent>()
                created.map { it.address }.toSet() shouldBe rs.members.map { it.address }.toSet()
                created.map { it.settings.options() }.toSet() shouldBe setOf(expected.options())
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("CMAP prose 3: every ConnectionPoolOption can be given in the URI") {
        MongoClusterSettings.fromUri("mongodb://localhost/?$options").pool.options() shouldBe expected.options()
    }

    test("CMAP prose 4: connection monitoring events can be subscribed to idiomatically (a Flow and a listener)") {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/"))
            try {
                coroutineScope {
                    val fromFlow = async(start = CoroutineStart.UNDISPATCHED) { cluster.poolEvents.filterIsInstance<dev.mooring.cmap.ConnectionCheckedInEvent>().first() }
                    val registration = cluster.addListener(recorder)
                    cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
                    withTimeout(10.seconds) { fromFlow.await() }.address shouldBe server.address
                    recorder.ofType<ConnectionPoolEvent>().any { it is dev.mooring.cmap.ConnectionCheckedOutEvent } shouldBe true
                    registration.close()
                }
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("CMAP prose 5: a checkout failing because connection set-up throws emits ConnectionCheckOutFailedEvent with reason connectionError") {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?serverSelectionTimeoutMS=10000"), listOf(recorder))
            try {
                cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) // the server is known; now the pool's handshakes fail
                val pooled = cluster.poolStatistics().getValue(server.address).totalConnections
                pooled shouldBe 1
                server.handler = { ctx, _, _ ->
                    // the monitor's connection stays up; new pooled connections get their hello refused
                    if (ctx.commandName.equals("hello", true) || ctx.commandName.equals("isMaster", true)) Reply.CloseConnection else null
                }
                // hold the one pooled connection so the next checkout must establish a new one
                cluster.withConnection { _ ->
                    shouldThrowAny { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
                }
                val failed = recorder.ofType<ConnectionCheckOutFailedEvent>()
                // one per attempt: set-up errors are retryable overload errors (CMAP backpressure labels), so retried
                failed.isNotEmpty() shouldBe true
                failed.map { it.reason }.toSet() shouldBe setOf(ConnectionCheckOutFailedReason.CONNECTION_ERROR)
            } finally {
                server.handler = { _, _, _ -> null }
                cluster.closeSuspending()
            }
        }
    }
})
