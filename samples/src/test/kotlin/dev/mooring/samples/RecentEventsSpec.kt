package dev.mooring.samples

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.ServerAddress
import dev.mooring.samples.demo.DemoArgs
import dev.mooring.samples.demo.DemoStats
import dev.mooring.samples.demo.Deployment
import dev.mooring.samples.demo.RecentEvents
import dev.mooring.samples.demo.Workload
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyId
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.ChangeStreamNamespace
import kotlin.time.Duration.Companion.milliseconds

class RecentEventsSpec : FunSpec({
    val a = ServerAddress("127.0.0.1", 40001)
    val b = ServerAddress("127.0.0.1", 40002)
    fun started(n: Int) = CommandStartedEvent(BsonDocument("ping", BsonInt32(1)), "admin", "ping", n, null, 1, null, a, timestampMillis = n.toLong())
    fun succeeded(n: Int) = CommandSucceededEvent(BsonDocument("ok", BsonInt32(1)), 1.milliseconds, "admin", "ping", n, null, 1, null, a, timestampMillis = n.toLong())
    fun heartbeat(at: ServerAddress, ts: Long) = ServerHeartbeatSucceededEvent(at, 7, BsonDocument(), 400_000, awaited = true, timestampMillis = ts)

    test("by default a flood of command events and checkouts does not push server and pool events out") {
        val recent = RecentEvents(capacity = 4)
        recent.record(ServerOpeningEvent(TopologyId("t"), a, 1))
        recent.record(PoolClearedEvent(a, timestampMillis = 2))
        repeat(500) {
            recent.record(started(it))
            recent.record(succeeded(it))
            recent.record(ConnectionCheckedOutEvent(a, 1, 1.milliseconds, timestampMillis = 3))
            recent.record(ConnectionCheckedInEvent(a, 1, timestampMillis = 3))
        }
        recent.lines().map { it.text } shouldBe listOf("ServerOpening 127.0.0.1:40001", "PoolCleared 127.0.0.1:40001")
    }

    test("command events are shown once switched on (flag or key) and hidden again") {
        val recent = RecentEvents(capacity = 4, showCommands = true)
        recent.record(started(1))
        recent.lines().single().text shouldBe "CommandStarted 127.0.0.1:40001 #1 admin.ping"
        recent.toggleCommands() shouldBe false
        recent.record(started(2))
        recent.lines() shouldHaveSize 1
        recent.toggleCommands() shouldBe true
        recent.record(succeeded(3))
        recent.lines().last().text shouldStartWith "CommandSucceeded"
        DemoArgs.parse(arrayOf("--replica-set", "--command-events")).commandEvents shouldBe true
        DemoArgs.parse(arrayOf("--replica-set")).commandEvents shouldBe false
    }

    test("a change stream's events are one summary line per namespace, updated in place; notes are lines of their own") {
        fun insert(id: String) = ChangeStreamDocument<BsonDocument>(
            BsonDocument("_data", BsonString(id)), "insert", ChangeStreamNamespace("mooring_demo", "items"), null,
            BsonDocument("_id", BsonString(id)), null, null, null, null, null, null, null, null, null, BsonDocument(),
        )
        val recent = RecentEvents(capacity = 10)
        recent.note("Change stream on mooring_demo.items opening")
        recent.change("mooring_demo.items", insert("c0-1"), 1)
        recent.record(heartbeat(a, 1))
        recent.change("mooring_demo.items", insert("c1-7"), 2)
        recent.lines().map { it.text } shouldBe listOf(
            "Change stream on mooring_demo.items opening",
            "Change stream mooring_demo.items: 2 events, last insert _id c1-7",
            "Heartbeats 127.0.0.1:40001 ok x1, last 0.400ms (streaming)",
        )
    }

    test("successful heartbeats are one summary line per server, updated in place; a failure is its own line") {
        val recent = RecentEvents(capacity = 10)
        recent.record(ServerHeartbeatStartedEvent(a, 7, awaited = true, timestampMillis = 1))
        recent.record(heartbeat(a, 1))
        recent.record(heartbeat(b, 2))
        recent.record(heartbeat(a, 3))
        recent.record(heartbeat(a, 4))
        recent.lines().map { it.text } shouldBe listOf(
            "Heartbeats 127.0.0.1:40001 ok x3, last 0.400ms (streaming)",
            "Heartbeats 127.0.0.1:40002 ok x1, last 0.400ms (streaming)",
        )
        recent.lines().first().timestampMillis shouldBe 4
        recent.record(ServerHeartbeatFailedEvent(a, 7, java.io.IOException("reset"), 1_000, awaited = true, timestampMillis = 5))
        recent.record(heartbeat(a, 6))
        recent.lines().map { it.text } shouldBe listOf(
            "Heartbeats 127.0.0.1:40002 ok x1, last 0.400ms (streaming)",
            "ServerHeartbeatFailed 127.0.0.1:40001 IOException: reset",
            "Heartbeats 127.0.0.1:40001 ok x1, last 0.400ms (streaming)",
        )
    }

    test("--replica-set under load: a step-down shows in the panel as server and topology changes, with heartbeats, without commands") {
        Deployment.ReplicaSet.start().use { rs ->
            val stats = DemoStats(RecentEvents(capacity = 1_000))
            MongoCluster(MongoClusterSettings.fromUri(rs.uri), listOf(stats)).use { cluster ->
                coroutineScope {
                    val workload = Workload(cluster, 8, stats).start(this)
                    withTimeout(30_000) { while (stats.operations < 200) delay(20) }
                    val what = rs.stepDown(electionDelayMillis = 200)
                    val old = Regex("stepped down (\\S+),").find(what)?.groupValues?.get(1) ?: error(what)
                    val texts = { stats.recent.lines().map { it.text } }
                    // the failover as the panel shows it: the old primary leaves RSPrimary (to RSSecondary, or to Unknown
                    // when an operation's NotWritablePrimary got there first), then the set has a primary again
                    fun failoverShown(lines: List<String>): Boolean {
                        val left = lines.indexOfFirst { it.startsWith("ServerDescriptionChanged $old RSPrimary -> ") }
                        return left >= 0 && lines.drop(left + 1).any { it.startsWith("TopologyDescriptionChanged") && it.endsWith("-> ReplicaSetWithPrimary") }
                    }
                    withTimeout(30_000) {
                        while (!failoverShown(texts()) || texts().none { it.startsWith("Heartbeats") }) delay(50)
                    }
                    workload.cancel()
                    withClue(texts().joinToString("\n")) {
                        texts().none { it.startsWith("Command") } shouldBe true
                        texts().count { it.startsWith("ServerHeartbeatSucceeded") } shouldBe 0
                    }
                }
            }
        }
    }
})
