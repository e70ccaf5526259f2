package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.Collections
import java.util.concurrent.atomic.AtomicReference
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp

/** Gossipping the cluster time (driver-sessions.md), against scripted servers and the test kit's replica set and mongoses. */
class ClusterTimeGossipSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun clusterTime(seconds: Int, inc: Int) = BsonDocument("clusterTime", BsonTimestamp(seconds, inc))
        .append("signature", BsonDocument("hash", BsonBinary(ByteArray(20))).append("keyId", BsonInt64(7)))
    fun insert() = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("x", BsonInt32(1)))))
    fun sentTimes(recorder: EventRecorder, name: String) = recorder.ofType<CommandStartedEvent>().filter { it.commandName == name }.map { it.command["\$clusterTime"] }

    /**
     * A standalone-looking server whose `ping` replies carry the cluster time [next] holds (none when
     * null) and whose other replies are the built-ins; records every command it receives.
     */
    suspend fun scripted(next: AtomicReference<BsonDocument?>, received: MutableList<BsonDocument>, fail: Boolean = false): WireServer =
        WireServer.start().also { s ->
            s.handler = { ctx, _, cmd ->
                received += cmd
                if (ctx.commandName == "ping") {
                    val reply = if (fail) WireServer.error(8000, "AtlasError", "scripted") else WireServer.ok()
                    next.get()?.let { reply["\$clusterTime"] = it }
                    Reply.Document(reply)
                } else {
                    null
                }
            }
        }

    /** Runs [block] with a cluster (URI [options]) directly connected to a [scripted] server and the commands it received. */
    suspend fun withScripted(
        next: AtomicReference<BsonDocument?>,
        options: String = "",
        fail: Boolean = false,
        block: suspend (MongoCluster, EventRecorder, List<BsonDocument>) -> Unit,
    ) {
        val received = Collections.synchronizedList(ArrayList<BsonDocument>())
        scripted(next, received, fail).use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true$options"), listOf(recorder))
            try {
                block(cluster, recorder, received)
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("no \$clusterTime is sent to a deployment that never reported one") {
        withScripted(AtomicReference(null)) { cluster, recorder, received ->
            cluster.runCommand("db", ping())
            cluster.runRetryableWrite("db", insert())
            cluster.runCommand("db", ping())
            recorder.ofType<CommandStartedEvent>().map { it.command.containsKey("\$clusterTime") } shouldBe listOf(false, false, false)
            received.any { it.containsKey("\$clusterTime") } shouldBe false
        }
    }

    test("the highest cluster time seen is sent, compared by timestamp and increment; a lower or an error reply's does not go back") {
        val next = AtomicReference<BsonDocument?>(clusterTime(100, 5))
        withScripted(next, "&heartbeatFrequencyMS=500") { cluster, recorder, received ->
            cluster.runCommand("db", ping()) // learns 100/5
            next.set(clusterTime(100, 3))
            cluster.runCommand("db", ping()) // sends 100/5, sees a lower 100/3
            next.set(clusterTime(100, 6))
            cluster.runCommand("db", ping()) // sends 100/5, sees 100/6 (same seconds, higher increment)
            cluster.runCommand("db", ping()) // sends 100/6
            sentTimes(recorder, "ping") shouldBe listOf(null, clusterTime(100, 5), clusterTime(100, 5), clusterTime(100, 6))
            // monitoring hellos after the cluster time was learnt carry none (no gossip on SDAM commands)
            val hellos = { received.filter { it.firstKey == "hello" || it.firstKey == "isMaster" } }
            val known = hellos().size
            withTimeout(30.seconds) { while (hellos().size < known + 2) delay(50) }
            hellos().none { it.containsKey("\$clusterTime") } shouldBe true
            // the server received exactly what the events show
            received.filter { it.firstKey == "ping" }.map { it["\$clusterTime"] } shouldBe sentTimes(recorder, "ping")
        }
        withScripted(AtomicReference(clusterTime(200, 1)), "&retryReads=false&retryWrites=false", fail = true) { cluster, recorder, _ ->
            shouldThrow<MongoCommandException> { cluster.runCommand("db", ping()) }
            shouldThrow<MongoCommandException> { cluster.runCommand("db", ping()) }
            sentTimes(recorder, "ping") shouldBe listOf(null, clusterTime(200, 1))
        }
    }

    test("a command carrying its own \$clusterTime is sent as given") {
        withScripted(AtomicReference(clusterTime(100, 5))) { cluster, _, received ->
            cluster.runCommand("db", ping())
            cluster.runCommand("db", ping().append("\$clusterTime", clusterTime(50, 1)))
            received.last()["\$clusterTime"] shouldBe clusterTime(50, 1)
        }
    }

    test("an explicit session sends the higher of its and the cluster's cluster time; advanceClusterTime touches only the session") {
        val next = AtomicReference<BsonDocument?>(clusterTime(100, 1))
        withScripted(next) { cluster, recorder, _ ->
            val session = cluster.startSession()
            session.clusterTime shouldBe null
            cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session)
            session.clusterTime shouldBe clusterTime(100, 1)
            next.set(clusterTime(100, 2))
            cluster.runCommand("db", ping()) // the cluster learns 100/2, the session does not (not its operation)
            session.clusterTime shouldBe clusterTime(100, 1)
            session.advanceClusterTime(clusterTime(100, 0)) // lower: ignored
            session.clusterTime shouldBe clusterTime(100, 1)
            session.advanceClusterTime(clusterTime(300, 1))
            session.clusterTime shouldBe clusterTime(300, 1)
            next.set(null)
            cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session) // sends the session's 300/1
            cluster.runCommand("db", ping()) // without the session: the cluster's 100/2
            cluster.withConnection(session = session) { c -> c.command("db", ping()) } // the session's again
            sentTimes(recorder, "ping") shouldBe listOf(null, clusterTime(100, 1), clusterTime(300, 1), clusterTime(100, 2), clusterTime(300, 1))
            shouldThrow<IllegalArgumentException> { session.advanceClusterTime(BsonDocument("clusterTime", BsonInt32(1))) }
            session.close()
        }
    }

    test("replica set: every operation gossips the cluster time of the previous reply (sessions prose test 3), getMores included") {
        val rs = ReplicaSetSimulator.start(clusterTime = true)
        try {
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri()), listOf(recorder))
            try {
                for (op in listOf<suspend () -> Unit>(
                    { cluster.runRetryableWrite("db", insert()) },
                    { cluster.runCommand("db", ping()) },
                    { cluster.runRetryableRead("db", BsonDocument("aggregate", BsonString("c")).append("pipeline", BsonArray()).append("cursor", BsonDocument())) },
                    { cluster.runCursorCommand("db", BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(1)), RunCursorCommandOptions(batchSize = 1)).toList() },
                )) {
                    op()
                    op()
                }
                val started = recorder.ofType<CommandStartedEvent>()
                val succeeded = recorder.ofType<CommandSucceededEvent>()
                started.size shouldBe succeeded.size
                started.drop(1).forEachIndexed { i, e ->
                    // each command carries what the reply before it reported (writes tick the clock, so the values differ)
                    e.command["\$clusterTime"] shouldBe succeeded[i].reply["\$clusterTime"]
                }
                started.any { it.commandName == "getMore" } shouldBe true
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        } finally {
            rs.close()
        }
    }

    test("monitors' hellos neither send nor advance the cluster time (sessions prose test 20)") {
        val rs = ReplicaSetSimulator.start(dataMembers = 1, clusterTime = true)
        try {
            val recorder = EventRecorder()
            val c1 = MongoCluster(MongoClusterSettings.fromUri("mongodb://${rs.primary!!.host}/?directConnection=true&heartbeatFrequencyMS=500"), listOf(recorder))
            try {
                c1.runCommand("admin", ping())
                val seen = recorder.ofType<CommandSucceededEvent>().last().reply["\$clusterTime"]
                // another client's write advances the deployment's cluster time, which the next hellos report
                MongoCluster(rs.seedUri()).use { c2 -> c2.runRetryableWrite("test", insert()) }
                val hellosBefore = recorder.ofType<dev.mooring.sdam.ServerHeartbeatSucceededEvent>().size
                withTimeout(30.seconds) {
                    while (recorder.ofType<dev.mooring.sdam.ServerHeartbeatSucceededEvent>().size < hellosBefore + 2) delay(50)
                }
                recorder.ofType<dev.mooring.sdam.ServerHeartbeatSucceededEvent>().last().reply.containsKey("\$clusterTime") shouldBe true
                c1.runCommand("admin", ping())
                recorder.ofType<CommandStartedEvent>().last().command["\$clusterTime"] shouldBe seen
            } finally {
                c1.closeAndCheckNoCoroutines()
            }
        } finally {
            rs.close()
        }
    }

    test("mongos routers report a shared cluster time that a client gossips from one router to another") {
        val cluster = ShardedClusterSimulator.start(2, clusterTime = true)
        try {
            val recorder = EventRecorder()
            MongoCluster(MongoClusterSettings.fromUri(cluster.seedUri(multiple = true)), listOf(recorder)).use { client ->
                repeat(4) { client.runRetryableWrite("db", insert()) }
                val started = recorder.ofType<CommandStartedEvent>()
                val succeeded = recorder.ofType<CommandSucceededEvent>()
                started.drop(1).forEachIndexed { i, e -> e.command["\$clusterTime"] shouldBe succeeded[i].reply["\$clusterTime"] }
            }
        } finally {
            cluster.close()
        }
    }
})
