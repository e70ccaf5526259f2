package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.samples.demo.ChangeWatch
import dev.mooring.samples.demo.RecentEvents
import dev.mooring.samples.demo.Workload
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.CopyOnWriteArrayList

/** The demo's change stream (`--watch`, key `w`): on, it reports the workload collection's inserts; off, its cursor is killed. */
class ChangeWatchSpec : FunSpec({
    timeout = 120_000

    test("toggled on it counts the inserts in one recent-events line; toggled off it kills the cursor") {
        ReplicaSetSimulator.start(dataMembers = 1, clusterTime = true).use { rs ->
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")))
            try {
                coroutineScope {
                    val recent = RecentEvents(capacity = 10)
                    val seen = CopyOnWriteArrayList<String>()
                    val watch = ChangeWatch(cluster, recent, this) { seen += it.operationType.orEmpty() }
                    watch.toggle() shouldBe true
                    while (rs.members.sumOf { it.openCursors } == 0) delay(10) // the stream is open
                    repeat(3) { i ->
                        val doc = BsonDocument("_id", BsonString("c0-$i")).append("n", BsonInt32(i))
                        cluster.runCommand(Workload.DATABASE, BsonDocument("insert", BsonString(Workload.COLLECTION)).append("documents", BsonArray(listOf(doc))))
                    }
                    while (watch.events.get() < 3) delay(10)
                    seen shouldBe listOf("insert", "insert", "insert")
                    recent.lines().map { it.text } shouldContain "Change stream ${ChangeWatch.NAMESPACE}: 3 events, last insert _id c0-2"
                    watch.toggle() shouldBe false
                    while (rs.members.sumOf { it.openCursors } > 0) delay(10) // killCursors reached the server
                    watch.isOn shouldBe false
                    recent.lines().last().text shouldStartWith "Change stream on ${ChangeWatch.NAMESPACE} closed"
                }
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("on a server without change streams (mongo-java-server) the stream's error is shown and the stream is off") {
        val server = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) }
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"))
        try {
            coroutineScope {
                val recent = RecentEvents(capacity = 10)
                val watch = ChangeWatch(cluster, recent, this)
                watch.toggle() shouldBe true
                while (recent.lines().none { it.text.contains("failed") }) delay(10)
                recent.lines().last().text shouldStartWith "Change stream on ${ChangeWatch.NAMESPACE} failed: "
                while (watch.isOn) delay(10)
            }
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }
})
