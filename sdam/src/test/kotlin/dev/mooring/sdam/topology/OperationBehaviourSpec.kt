package dev.mooring.sdam.topology

import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** runCommand's extras: the settings DSL, timeoutMS, the pool-cleared retry, `$readPreference` on secondaries. */
class OperationBehaviourSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    test("MongoCluster { dsl } connects like the URI form") {
        val server = WireServer.start()
        try {
            val cluster = MongoCluster {
                hosts(server.address.toString())
                serverSelectionTimeoutMS = 5_000
            }
            cluster.runCommand("admin", ping()).getInt32("ok").value shouldBe 1
            cluster.closeAndCheckNoCoroutines()
        } finally {
            server.close()
        }
    }

    test("timeoutMS bounds selection, checkout and the command together with a typed error") {
        val server = WireServer.start()
        try {
            val cluster = MongoCluster("mongodb://${server.address}/?timeoutMS=500")
            cluster.runCommand("admin", ping())
            server.configureFailPoint(
                BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["ping"], blockConnection: true, blockTimeMS: 5000}}"""),
            )
            shouldThrow<MongoOperationTimeoutException> { cluster.runCommand("admin", ping()) }
            cluster.runCommand("admin", ping()).getInt32("ok").value shouldBe 1 // the cluster is fine afterwards
            cluster.closeAndCheckNoCoroutines()
        } finally {
            server.close()
        }
    }

    test("a pool-cleared error (interrupted in-use connection) is retried once after a fresh selection") {
        val server = WireServer.start()
        val monitors = ScriptedMonitors()
        val a = server.address
        val cluster = ClusterInternals.create(MongoClusterSettings.fromUri("mongodb://$a/?serverSelectionTimeoutMS=10000"), monitors, listOf(EventRecorder()))
        try {
            val standalone = ServerDescription(a, ServerType.STANDALONE, maxWireVersion = 21, roundTripTimeMillis = 1.0)
            monitors[a].report(standalone)
            cluster.runCommand("admin", ping())
            server.configureFailPoint(
                BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["find"], blockConnection: true, blockTimeMS: 10000}}"""),
            )
            coroutineScope {
                val find = async { cluster.runCommand("test", BsonDocument("find", BsonString("c"))) }
                withTimeout(10.seconds) { while (server.counters.commandCount("find") < 1) delay(5) }
                val timeout = MongoNetworkTimeoutException("hello timed out", a)
                monitors[a].report(ServerDescription.unknown(a, timeout.toString()), timeout, clear = true, interrupt = true)
                // The retry waits in selection until the server is known again.
                monitors[a].report(standalone)
                find.await().getInt32("ok").value shouldBe 1
            }
            server.counters.commandCount("find") shouldBe 2
            cluster.poolStatistics().getValue(a).generation shouldBe 1
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    test("secondary reads carry \$readPreference and run on a secondary") {
        ReplicaSetSimulator.start(dataMembers = 2).use { rs ->
            val cluster = MongoCluster(rs.seedUri("heartbeatFrequencyMS=500"))
            try {
                val secondary = rs.members[1]
                cluster.awaitTopology { it.servers[secondary.address]?.type == ServerType.RS_SECONDARY && it.hasPrimary }
                cluster.runCommand("test", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(1))))))
                val before = secondary.counters!!.commandCount("find")
                val reply = cluster.runCommand("test", BsonDocument("find", BsonString("c")), ReadPreference.SECONDARY)
                reply.getDocument("cursor").getArray("firstBatch").size shouldBe 1
                secondary.counters!!.commandCount("find") shouldBe before + 1
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})
