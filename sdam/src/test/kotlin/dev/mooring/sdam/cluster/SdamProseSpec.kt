package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.ErrorHandling
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologySettings
import dev.mooring.sdam.TopologyStateMachine
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * The prose tests of server-discovery-and-monitoring-tests.md on the test kit (the replica set
 * simulator and WireServer), each a named test. Timings are asserted as lower bounds only.
 */
class SdamProseSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun insertOne() = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("x", BsonInt32(1)))))
    fun find() = BsonDocument("find", BsonString("c"))
    fun failPoint(command: String, data: String) =
        BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["$command"], $data}}""")

    // A one-minute heartbeat: only the error handling under test changes the topology quickly.
    // Polling: under streaming an immediate-check request waits for the stream (the simulated member's state does not change).
    val slow = "serverMonitoringMode=poll&heartbeatFrequencyMS=60000&serverSelectionTimeoutMS=20000&retryWrites=false&retryReads=false"

    suspend fun withReplicaSet(options: String = slow, block: suspend (ReplicaSetSimulator, MongoCluster, EventRecorder) -> Unit) {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri(options)), listOf(recorder))
            try {
                cluster.awaitTopology { t -> t.primary?.address == rs.primary!!.address && t.servers.values.count { it.type == ServerType.RS_SECONDARY } == 2 }
                block(rs, cluster, recorder)
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("SDAM prose: All servers unavailable - a client can be constructed with every seed unavailable") {
        val cluster = MongoCluster("mongodb://127.0.0.1:1,127.0.0.1:2/?serverSelectionTimeoutMS=1000")
        cluster.closeSuspending()
    }

    test("SDAM prose: Network error writing to primary - the primary becomes Unknown, the topology ReplicaSetNoPrimary") {
        withReplicaSet { rs, cluster, recorder ->
            val primary = rs.primary!!
            primary.configureFailPoint(failPoint("insert", "closeConnection: true"))
            shouldThrow<MongoNetworkException> { cluster.runCommand("db", insertOne()) }
            val t = cluster.topology.value
            t.servers.getValue(primary.address).type shouldBe ServerType.UNKNOWN
            t.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
            recorder.ofType<PoolClearedEvent>().single().address shouldBe primary.address
        }
    }

    test("SDAM prose: \"Not writable primary\" error when reading without SecondaryOk - the primary becomes Unknown, ReplicaSetNoPrimary") {
        withReplicaSet { rs, cluster, _ ->
            val primary = rs.primary!!
            primary.configureFailPoint(failPoint("find", "errorCode: 10107"))
            shouldThrow<MongoCommandException> { cluster.runCommand("db", find()) }.code shouldBe 10107
            val t = cluster.topology.value
            t.servers.getValue(primary.address).type shouldBe ServerType.UNKNOWN
            t.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
            // a multi-threaded client re-checks it at once: it is primary again long before the heartbeat
            cluster.awaitTopology { it.primary?.address == primary.address }
        }
    }

    test("SDAM prose: \"Node is recovering\" error reading with SecondaryOk - the secondary becomes Unknown, ReplicaSetWithPrimary stays, re-checked at once") {
        withReplicaSet { rs, cluster, _ ->
            rs.secondaries.forEach { it.configureFailPoint(failPoint("find", "errorCode: 13436")) }
            shouldThrow<MongoCommandException> { cluster.runCommand("db", find(), ReadPreference.SECONDARY) }.code shouldBe 13436
            val t = cluster.topology.value
            t.type shouldBe TopologyType.REPLICA_SET_WITH_PRIMARY
            t.servers.values.count { it.type == ServerType.UNKNOWN } shouldBe 1
            cluster.awaitTopology { it.servers.values.count { s -> s.type == ServerType.RS_SECONDARY } == 2 }
        }
    }

    test("SDAM prose: \"Node is recovering\" error from a write concern error - the primary becomes Unknown, ReplicaSetNoPrimary") {
        withReplicaSet { rs, cluster, _ ->
            val primary = rs.primary!!
            primary.configureFailPoint(failPoint("insert", "writeConcernError: {code: 91, errmsg: 'Replication is being shut down'}"))
            cluster.runCommand("db", insertOne())["writeConcernError"]!!.asDocument().getInt32("code").value shouldBe 91
            val t = cluster.topology.value
            t.servers.getValue(primary.address).type shouldBe ServerType.UNKNOWN
            t.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
            cluster.awaitTopology { it.primary?.address == primary.address }
        }
    }

    test("SDAM prose: Parsing \"not writable primary\" and \"node is recovering\" errors - Unknown with the message stored, in any field order") {
        val a = ServerAddress("a")
        val settings = TopologySettings(listOf(a), replicaSetName = "rs")
        val td = TopologyStateMachine.onServerDescription(
            TopologyStateMachine.open(settings).description,
            ServerDescription.fromHello(a, BsonDocument.parse("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017'], maxWireVersion: 21}")),
            settings,
        ).description
        val replies = listOf(
            "{ok: 0, errmsg: 'not writable primary'}",
            "{errmsg: 'not writable primary', ok: 0}",
            "{ok: 0, \$err: 'not primary or secondary; cannot currently read from this replSet member'}",
            "{\$err: 'not writable primary and SecondaryOk=false', ok: 0}",
            "{ok: 0, errmsg: 'node is recovering'}",
        )
        for (reply in replies) {
            val error = ApplicationError.fromCommandResponse(a, BsonDocument.parse(reply), 0, true)!!
            val sd = ErrorHandling.onApplicationError(td, error, 0, settings).description.servers.getValue(a)
            sd.type shouldBe ServerType.UNKNOWN
            sd.error!! shouldContain (BsonDocument.parse(reply).let { (it["errmsg"] ?: it["\$err"])!!.asString().value })
        }
    }

    /** A client with only a secondary of a fresh replica set in its seed list ([options] added). */
    suspend fun withSecondarySeed(options: String, block: suspend (MongoCluster) -> Unit) {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val cluster = MongoCluster("mongodb://${rs.secondaries.first().address}/?serverSelectionTimeoutMS=20000$options")
            try {
                block(cluster)
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("SDAM prose: Topology discovery - directConnection=false to a secondary discovers the primary; the write succeeds") {
        withSecondarySeed("&directConnection=false") { it.runCommand("db", insertOne())["n"]!!.asNumber().intValue() shouldBe 1 }
    }

    test("SDAM prose: Direct connection - directConnection=true to a secondary: the write fails with NotWritablePrimary") {
        withSecondarySeed("&directConnection=true&retryWrites=false") { cluster ->
            // primaryPreferred: a direct connection selects the secondary; the server refuses the write
            shouldThrow<MongoCommandException> { cluster.runCommand("db", insertOne(), ReadPreference.PRIMARY_PREFERRED) }.code shouldBe 10107
        }
    }

    test("SDAM prose: Existing behavior - without directConnection Mooring discovers the set (it starts Unknown): the write succeeds") {
        withSecondarySeed("") { it.runCommand("db", insertOne())["n"]!!.asNumber().intValue() shouldBe 1 }
    }

    test("SDAM prose: Monitors sleep at least minHeartbeatFrequencyMS between checks") {
        WireServer.start().use { server ->
            server.configureFailPoint(
                BsonDocument.parse(
                    """{configureFailPoint: "failCommand", mode: {times: 5}, data: {failCommands: ["hello", "isMaster"], errorCode: 1234, appName: "SDAMMinHeartbeatFrequencyTest"}}""",
                ),
            )
            val cluster = MongoCluster("mongodb://${server.address}/?directConnection=true&appName=SDAMMinHeartbeatFrequencyTest&serverSelectionTimeoutMS=5000")
            try {
                val start = System.nanoTime()
                cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))).getNumber("ok").intValue() shouldBe 1
                // five failed checks, then a good one: at least four waits of minHeartbeatFrequencyMS (500 ms)
                ((System.nanoTime() - start) / 1_000_000) shouldBeGreaterThanOrEqual 2_000L
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("SDAM prose: Connection Pool Management - the pool is ready after a successful heartbeat, cleared after a failed one, ready again") {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(
                MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true&appName=SDAMPoolManagementTest&heartbeatFrequencyMS=500"),
                listOf(recorder),
            )
            try {
                withTimeout(20.seconds) { while (recorder.ofType<PoolReadyEvent>().isEmpty()) delay(20) }
                val order = recorder.events
                order.indexOfFirst { it is ServerHeartbeatSucceededEvent } shouldBeLessThanIndexOf order.indexOfFirst { it is PoolReadyEvent }
                recorder.clear()
                server.configureFailPoint(
                    BsonDocument.parse(
                        """{configureFailPoint: "failCommand", mode: {times: 2}, data: {failCommands: ["hello", "isMaster"], errorCode: 1234, appName: "SDAMPoolManagementTest"}}""",
                    ),
                )
                withTimeout(30.seconds) {
                    while (recorder.events.let { e -> e.indexOfFirst { it is PoolClearedEvent }.let { c -> c < 0 || e.drop(c).none { it is PoolReadyEvent } } }) delay(20)
                }
                val after = recorder.events
                val failed = after.indexOfFirst { it is ServerHeartbeatFailedEvent }
                val cleared = after.indexOfFirst { it is PoolClearedEvent }
                val succeeded = after.withIndex().first { it.index > cleared && it.value is ServerHeartbeatSucceededEvent }.index
                val ready = after.withIndex().first { it.index > cleared && it.value is PoolReadyEvent }.index
                (failed in 0 until cleared) shouldBe true
                (succeeded < ready) shouldBe true
            } finally {
                server.clearFailPoint()
                cluster.closeSuspending()
            }
        }
    }

    test("SDAM prose: Connection Pool Backpressure - connection establishment failures under the ingress rate limiter do not clear the pool") {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?maxConnecting=100"), listOf(recorder))
            try {
                val admin = BsonDocument("setParameter", BsonInt32(1))
                cluster.runCommand("admin", admin.clone().append("ingressConnectionEstablishmentRateLimiterEnabled", org.bson.BsonBoolean.TRUE))
                cluster.runCommand("admin", admin.clone().append("ingressConnectionEstablishmentRatePerSec", BsonInt32(20)))
                cluster.runCommand("admin", admin.clone().append("ingressConnectionEstablishmentBurstCapacitySecs", BsonInt32(1)))
                cluster.runCommand("admin", admin.clone().append("ingressConnectionEstablishmentMaxQueueDepth", BsonInt32(1)))
                cluster.runCommand("test", BsonDocument("insert", BsonString("test")).append("documents", BsonArray(listOf(BsonDocument()))))
                val sleepy = BsonDocument("find", BsonString("test"))
                    .append("filter", BsonDocument("\$where", BsonString("function() { sleep(2000); return true; }"))).append("limit", BsonInt32(1))
                kotlinx.coroutines.coroutineScope {
                    (1..100).map { async { runCatching { cluster.runRetryableRead("test", sleepy) } } }.forEach { it.await() }
                }
                recorder.ofType<dev.mooring.cmap.ConnectionCheckOutFailedEvent>().size shouldBeGreaterThanOrEqualInt 10
                recorder.ofType<PoolClearedEvent>().size shouldBe 0
            } finally {
                server.ingressConnectionRateLimiter.enabled = false
                cluster.closeSuspending()
            }
        }
    }
})

private infix fun Int.shouldBeGreaterThanOrEqualInt(other: Int) {
    (this >= other) shouldBe true
}

private infix fun Int.shouldBeLessThanIndexOf(other: Int) {
    (this in 0 until other) shouldBe true
}
