package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoCursorProtocolException
import dev.mooring.sdam.MongoCursorServerUnavailableException
import dev.mooring.sdam.MongoMissingCursorException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TimeoutMode
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/** runCursorCommand over the test kit's servers: batches, getMore routing, killCursors, pinning, typed errors. */
class CursorSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun insertCommand(from: Int, count: Int) = BsonDocument("insert", BsonString("c"))
        .append("documents", BsonArray((from until from + count).map { BsonDocument("_id", BsonInt32(it)) }))

    fun find(batchSize: Int = 101) = BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(batchSize))

    val secondary = ReadPreference(ReadPreferenceMode.SECONDARY)

    /** Runs [block] with a standalone test server and a cluster directly connected to it. */
    suspend fun onStandalone(block: suspend (WireServer, MongoCluster) -> Unit) {
        val server = WireServer.start()
        try {
            MongoCluster("mongodb://${server.address}/?directConnection=true").use { block(server, it) }
        } finally {
            server.close()
        }
    }

    /** Runs [block] with a 3-member replica set, a cluster that sees both secondaries, and its event recorder. */
    suspend fun onReplicaSet(block: suspend (ReplicaSetSimulator, MongoCluster, EventRecorder) -> Unit) {
        ReplicaSetSimulator.start().use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("heartbeatFrequencyMS=500")), listOf(recorder))
            try {
                cluster.awaitTopology { t -> t.servers.values.count { it.type == ServerType.RS_SECONDARY } == 2 && t.primary != null }
                block(rs, cluster, recorder)
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }

    test("10,000 documents in batches of 101 from a secondary: every getMore on the server that opened the cursor") {
        onReplicaSet { rs, cluster, recorder ->
            for (i in 0 until 10) cluster.runCommand("db", insertCommand(i * 1000, 1000))
            recorder.clear()
            val docs = cluster.runCursorCommand("db", find(), RunCursorCommandOptions(readPreference = secondary, batchSize = 101)).toList()
            docs.map { it.getInt32("_id").value } shouldContainExactly (0 until 10_000).toList()
            val started = recorder.ofType<CommandStartedEvent>()
            val find = started.single { it.commandName == "find" }
            val getMores = started.filter { it.commandName == "getMore" }
            getMores.size shouldBe 99 // 10,000 = 101 + 99 x 101 (the last one short)
            getMores.map { it.address }.toSet() shouldBe setOf(find.address)
            cluster.topology.value.servers.getValue(find.address).type shouldBe ServerType.RS_SECONDARY
            getMores.map { it.command["lsid"] }.toSet() shouldBe setOf(find.command["lsid"])
            (find.command["lsid"] != null) shouldBe true
            started.count { it.commandName == "killCursors" } shouldBe 0
            rs.members.sumOf { it.openCursors } shouldBe 0
        }
    }

    test("cancelling after 150 documents sends exactly one killCursors on the cursor's server and leaves no connection checked out") {
        onReplicaSet { rs, cluster, recorder ->
            for (i in 0 until 10) cluster.runCommand("db", insertCommand(i * 1000, 1000))
            recorder.clear()
            val docs = cluster.runCursorCommand("db", find(), RunCursorCommandOptions(readPreference = secondary, batchSize = 101)).take(150).toList()
            docs.size shouldBe 150
            val started = recorder.ofType<CommandStartedEvent>()
            val find = started.single { it.commandName == "find" }
            started.count { it.commandName == "getMore" } shouldBe 1
            val kill = started.single { it.commandName == "killCursors" }
            kill.address shouldBe find.address
            kill.command.getArray("cursors").single() shouldBe (recorder.ofType<CommandSucceededEvent>().first { it.commandName == "find" }.reply.getDocument("cursor")["id"])
            rs.members.sumOf { it.counters?.commandCount("killCursors") ?: 0 } shouldBe 1
            rs.members.sumOf { it.openCursors } shouldBe 0
            cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
        }
    }

    test("load-balanced: the cursor pins its connection (one checkout, one check-in), released when killed or exhausted") {
        val lb = LoadBalancerSimulator.start(backends = 2)
        try {
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(lb.seedUri()), listOf(recorder))
            try {
                for (i in 0 until 10) cluster.runCommand("db", insertCommand(i * 1000, 1000))
                recorder.clear()
                val options = RunCursorCommandOptions(batchSize = 101)
                val docs = cluster.runCursorCommand("db", find(), options).take(150).toList()
                docs.size shouldBe 150
                recorder.ofType<ConnectionCheckedOutEvent>().size shouldBe 1
                recorder.ofType<ConnectionCheckedInEvent>().size shouldBe 1
                val started = recorder.ofType<CommandStartedEvent>()
                started.map { it.commandName } shouldContainExactly listOf("find", "getMore", "killCursors")
                started.map { it.connectionId }.toSet().size shouldBe 1
                lb.server.counters.commandCount("killCursors") shouldBe 1
                lb.server.cursors.openCount shouldBe 0
                cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0

                // two cursors at once, each on its own pinned connection (so on its own backend), both drained
                recorder.clear()
                val (a, b) = coroutineScope {
                    val first = async { cluster.runCursorCommand("db", find(), options).toList() }
                    val second = async { cluster.runCursorCommand("db", find(), options).toList() }
                    first.await() to second.await()
                }
                a.size shouldBe 10_000
                b.size shouldBe 10_000
                recorder.ofType<CommandStartedEvent>().count { it.commandName == "killCursors" } shouldBe 0
                recorder.ofType<ConnectionCheckedOutEvent>().size shouldBe recorder.ofType<ConnectionCheckedInEvent>().size
                cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
                lb.server.cursors.openCount shouldBe 0
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        } finally {
            lb.close()
        }
    }

    test("load-balanced: a getMore cut off by timeoutMS leaves the connection unusable: close sends no killCursors on it and checks it in") {
        val lb = LoadBalancerSimulator.start(backends = 1)
        try {
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(lb.seedUri()), listOf(recorder))
            try {
                cluster.runCommand("db", insertCommand(0, 20))
                recorder.clear()
                lb.configureFailPoint(
                    BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["getMore"], blockConnection: true, blockTimeMS: 2000}}"""),
                )
                val options = RunCursorCommandOptions(timeoutMS = 500, timeoutMode = TimeoutMode.ITERATION, batchSize = 5)
                shouldThrow<MongoOperationTimeoutException> { cluster.runCursorCommand("db", find(5), options).toList() }
                recorder.ofType<CommandStartedEvent>().map { it.commandName } shouldContainExactly listOf("find", "getMore")
                recorder.ofType<ConnectionCheckedOutEvent>().size shouldBe 1
                recorder.ofType<ConnectionCheckedInEvent>().size shouldBe 1
                cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        } finally {
            lb.close()
        }
    }

    test("an exception in the collector kills the cursor; an exhausted cursor sends no killCursors") {
        onStandalone { server, cluster ->
            cluster.runCommand("db", insertCommand(0, 300))
            shouldThrow<IllegalStateException> {
                cluster.runCursorCommand("db", find(10), RunCursorCommandOptions(batchSize = 10)).collect { if (it.getInt32("_id").value == 15) error("stop") }
            }
            server.counters.commandCount("killCursors") shouldBe 1
            cluster.runCursorCommand("db", find(10)).toList().size shouldBe 300
            server.counters.commandCount("killCursors") shouldBe 1
            server.cursors.openCount shouldBe 0
            val listed = cluster.runCursorCommand("db", BsonDocument("listCollections", BsonInt32(1))).toList()
            listed.map { it.getString("name").value } shouldBe listOf("c")
            val aggregated = cluster.runCursorCommand(
                "db",
                BsonDocument("aggregate", BsonString("c")).append("pipeline", BsonArray(listOf(BsonDocument("\$skip", BsonInt32(5)))))
                    .append("cursor", BsonDocument("batchSize", BsonInt32(7))),
                RunCursorCommandOptions(batchSize = 50),
            ).toList()
            aggregated.size shouldBe 295
        }
    }

    test("a getMore failing with a retryable overload error is retried on its server at most maxAdaptiveRetries times, never with retryReads=false") {
        val server = WireServer.start()
        fun failGetMore(times: Int) = server.configureFailPoint(
            BsonDocument.parse(
                """{configureFailPoint: "failCommand", mode: {times: $times}, data: {failCommands: ["getMore"], errorCode: 2, """ +
                    """errorLabels: ["RetryableError", "SystemOverloadedError"]}}""",
            ),
        )
        try {
            for ((retryReads, times, succeeds) in listOf(Triple(true, 2, true), Triple(true, 3, false), Triple(false, 1, false))) {
                MongoCluster("mongodb://${server.address}/?directConnection=true&retryReads=$retryReads").use { cluster ->
                    if (server.collections.execute("db", BsonDocument("count", BsonString("c")))!!.getNumber("n").intValue() == 0) {
                        cluster.runCommand("db", insertCommand(0, 30))
                    }
                    failGetMore(times)
                    val before = server.counters.commandCount("getMore")
                    val read = runCatching { cluster.runCursorCommand("db", find(10), RunCursorCommandOptions(batchSize = 10)).toList() }
                    if (succeeds) {
                        read.getOrThrow().size shouldBe 30
                    } else {
                        (read.exceptionOrNull() as MongoCommandException).code shouldBe 2
                        // the first getMore and its retries only: 1 + maxAdaptiveRetries (2) with retryReads, 1 without
                        server.counters.commandCount("getMore") - before shouldBe (if (retryReads) 3 else 1)
                    }
                    server.clearFailPoint()
                }
            }
        } finally {
            server.close()
        }
    }

    test("typed errors: no cursor document names the command; a getMore with another cursor id or namespace is a protocol error") {
        onStandalone { server, cluster ->
            val missing = shouldThrow<MongoMissingCursorException> { cluster.runCursorCommand("db", ping()).toList() }
            missing.commandName shouldBe "ping"
            missing.message shouldContain "ping"
            cluster.runCommand("db", insertCommand(0, 30))
            for ((bad, said) in listOf("id" to "cursor id", "ns" to "namespace")) {
                server.handler = { ctx, _, cmd ->
                    if (ctx.commandName != "getMore") null else {
                        val id = if (bad == "id") cmd.getInt64("getMore").value + 1 else cmd.getInt64("getMore").value
                        val ns = if (bad == "ns") "db.other" else "db.c"
                        Reply.Document(
                            BsonDocument("cursor", BsonDocument("nextBatch", BsonArray()).append("id", BsonInt64(id)).append("ns", BsonString(ns)))
                                .append("ok", BsonInt32(1)),
                        )
                    }
                }
                val e = shouldThrow<MongoCursorProtocolException> { cluster.runCursorCommand("db", find(10)).toList() }
                e.message shouldContain said
            }
            server.handler = { _, _, _ -> null }
            // a getMore the server refuses surfaces as the server's error
            server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["getMore"], errorCode: 43}}"""))
            shouldThrow<MongoCommandException> { cluster.runCursorCommand("db", find(10)).toList() }.code shouldBe 43
            cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
        }
    }

    test("a cursor whose server left the topology fails on its next getMore with a typed error") {
        onReplicaSet { rs, cluster, _ ->
            cluster.runCommand("db", insertCommand(0, 100))
            val primary = rs.primary!!
            val e = shouldThrow<MongoCursorServerUnavailableException> {
                cluster.runCursorCommand("db", find(10), RunCursorCommandOptions(readPreference = secondary, batchSize = 10)).collect {
                    if (it.getInt32("_id").value == 5) {
                        val secondaries = rs.members.filter { m -> m !== primary }
                        rs.reconfigure { secondaries.forEach { m -> remove(m) } }
                        cluster.awaitTopology { t -> t.servers.size == 1 }
                    }
                }
            }
            (e.address in rs.allMembers.filter { it !== primary }.map { it.address }) shouldBe true
        }
    }

    test("a tailable cursor is not ended by an empty batch and sees documents inserted later") {
        onStandalone { server, cluster ->
            cluster.runCommand("db", insertCommand(0, 3))
            val tail = BsonDocument("find", BsonString("c")).append("tailable", org.bson.BsonBoolean.TRUE).append("awaitData", org.bson.BsonBoolean.TRUE)
            val seen = ArrayList<Int>()
            cluster.runCursorCommand("db", tail, RunCursorCommandOptions(cursorType = CursorType.TAILABLE_AWAIT, maxTimeMS = 50)).take(6).collect {
                seen.add(it.getInt32("_id").value)
                if (seen.size == 3) cluster.runCommand("db", insertCommand(3, 3))
            }
            seen shouldBe listOf(0, 1, 2, 3, 4, 5)
            server.counters.commandCount("killCursors") shouldBe 1
            server.cursors.openCount shouldBe 0
        }
    }

    test("timeoutMS: a getMore past the cursor's time fails with MongoOperationTimeoutException; conflicting options are refused") {
        onStandalone { server, cluster ->
            cluster.runCommand("db", insertCommand(0, 30))
            server.handler = { ctx, _, _ -> if (ctx.commandName == "getMore") Reply.Delayed(20_000, Reply.CloseConnection) else null }
            for (mode in listOf(TimeoutMode.CURSOR_LIFETIME, TimeoutMode.ITERATION)) {
                val seen = ArrayList<BsonDocument>()
                shouldThrow<MongoOperationTimeoutException> {
                    cluster.runCursorCommand("db", find(10), RunCursorCommandOptions(timeoutMS = 500, timeoutMode = mode)).collect { seen.add(it) }
                }
                seen.size shouldBe 10
            }
            cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
            shouldThrow<IllegalArgumentException> { cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMS = 500, maxTimeMS = 100)) }
            shouldThrow<IllegalArgumentException> {
                cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMS = 500, cursorType = CursorType.TAILABLE_AWAIT, maxTimeMS = 500))
            }
            shouldThrow<IllegalArgumentException> { RunCursorCommandOptions(cursorType = CursorType.TAILABLE, timeoutMode = TimeoutMode.CURSOR_LIFETIME) }
        }
    }
})
