package dev.mooring.sdam.cluster

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.PoolClosedException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyOpeningEvent
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.net.ServerSocket
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** MongoCluster against a standalone server: mongo-java-server and the test kit's WireServer. */
class StandaloneClusterSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    test("mongo-java-server: discovery as Single, runCommand ping/insert/find, pool statistics, clean close") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        try {
            val recorder = EventRecorder()
            val settings = MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=10000")
            val cluster = MongoCluster(settings, listOf(recorder))
            cluster.runCommand("admin", ping())["ok"]!!.asNumber().intValue() shouldBe 1
            cluster.topology.value.type shouldBe TopologyType.SINGLE
            cluster.topology.value.servers.values.single().type shouldBe ServerType.STANDALONE

            val insert = BsonDocument("insert", BsonString("people"))
                .append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(1)).append("name", BsonString("Ada")))))
            cluster.runCommand("test", insert)["n"]!!.asNumber().intValue() shouldBe 1
            val found = cluster.runCommand("test", BsonDocument("find", BsonString("people")).append("filter", BsonDocument("_id", BsonInt32(1))))
            val batch = found.getDocument("cursor").getArray("firstBatch")
            batch.single().asDocument().getString("name").value shouldBe "Ada"

            val stats = cluster.poolStatistics().values.single()
            stats.totalConnections shouldBe 1
            stats.inUseConnections shouldBe 0

            cluster.closeAndCheckNoCoroutines()
            val events = recorder.events
            events.first().shouldBeInstanceOf<TopologyOpeningEvent>()
            events[1].shouldBeInstanceOf<TopologyDescriptionChangedEvent>()
            events[2].shouldBeInstanceOf<ServerOpeningEvent>()
            events.last().shouldBeInstanceOf<TopologyClosedEvent>()
            val closing = events.takeLast(3)
            closing[0].shouldBeInstanceOf<ServerClosedEvent>()
            closing[1].shouldBeInstanceOf<TopologyDescriptionChangedEvent>().newDescription.type shouldBe TopologyType.UNKNOWN
            shouldThrow<MongoClusterClosedException> { cluster.runCommand("admin", ping()) }
        } finally {
            server.shutdownNow()
        }
    }

    test("a selection timeout describes the topology it saw") {
        val port = ServerSocket(0).use { it.localPort } // nothing listens here any more
        val cluster = MongoCluster("mongodb://127.0.0.1:$port/?serverSelectionTimeoutMS=1200&connectTimeoutMS=500")
        try {
            val e = shouldThrow<MongoServerSelectionTimeoutException> { cluster.runCommand("admin", ping()) }
            e.message shouldContain "Topology type: Unknown"
            e.message shouldContain "127.0.0.1:$port"
            e.message shouldContain "type: UNKNOWN"
            e.message shouldContain "error:"
            e.topology.servers.keys shouldContainExactly listOf(ServerAddress("127.0.0.1", port))
        } finally {
            cluster.closeAndCheckNoCoroutines()
        }
    }

    test("close leaves no coroutines and no sockets open on the server") {
        val server = WireServer.start()
        try {
            val cluster = MongoCluster("mongodb://${server.address}/?heartbeatFrequencyMS=500")
            repeat(5) { cluster.runCommand("admin", ping()) }
            (server.counters.currentlyOpen >= 2) shouldBe true // a monitoring connection and a pooled one
            cluster.closeAndCheckNoCoroutines()
            withTimeout(10.seconds) { while (server.counters.currentlyOpen != 0) delay(20) }
            server.counters.currentlyOpen shouldBe 0
        } finally {
            server.close()
        }
    }

    test("graceful close: new operations refused at once, running ones finish, queued checkouts fail with the pool-closed error") {
        val server = WireServer.start()
        try {
            val cluster = MongoCluster("mongodb://${server.address}/?maxPoolSize=1&serverSelectionTimeoutMS=10000")
            cluster.runCommand("admin", ping())
            val holding = CompletableDeferred<Unit>()
            val release = CompletableDeferred<Unit>()
            coroutineScope {
                val running = async {
                    cluster.withConnection { c ->
                        holding.complete(Unit)
                        release.await()
                        c.command("admin", ping())
                    }
                }
                holding.await()
                val queued = async { runCatching { cluster.runCommand("admin", ping()) } }
                withTimeout(10.seconds) { while (cluster.poolStatistics().values.single().waitQueueSize != 1) delay(10) }
                val closing = async { cluster.close(30.seconds) }
                withTimeout(10.seconds) { queued.await() }.exceptionOrNull().shouldBeInstanceOf<PoolClosedException>()
                shouldThrow<MongoClusterClosedException> { cluster.runCommand("admin", ping()) }
                closing.isCompleted shouldBe false
                release.complete(Unit)
                running.await()["ok"]!!.asNumber().intValue() shouldBe 1
                closing.await()
            }
            ClusterInternalsCheck.assertStopped(cluster)
        } finally {
            server.close()
        }
    }
})

private object ClusterInternalsCheck {
    fun assertStopped(cluster: MongoCluster) {
        val job = dev.mooring.sdam.internal.topology.ClusterInternals.rootJob(cluster)
        job.isCompleted shouldBe true
    }
}
