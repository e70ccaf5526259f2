package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.MongoSessionNotSupportedException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import java.util.Collections
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** Explicit and implicit sessions (driver-sessions.md) against the test kit's wire server. */
class SessionSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    fun uri(server: WireServer) = "mongodb://${server.address}/?directConnection=true"
    fun insert(n: Int) = BsonDocument("insert", BsonString("c")).append("documents", BsonArray((0 until n).map { BsonDocument("_id", BsonInt32(it)) }))
    fun find() = BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(2))

    test("an explicit session's lsid goes with runCommand, runCursorCommand (every getMore), runRetryableWrite and withConnection") {
        val server = WireServer.start()
        try {
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri(server)), listOf(recorder))
            try {
                cluster.startSession().use { session ->
                    cluster.runRetryableWrite("db", insert(5), session)
                    cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session)
                    cluster.runCursorCommand("db", find(), RunCursorCommandOptions(session = session, batchSize = 2)).toList().size shouldBe 5
                    cluster.withConnection(session = session) { c -> c.command("db", ping()) }
                    val sent = recorder.ofType<CommandStartedEvent>()
                    sent.map { it.commandName } shouldBe listOf("insert", "ping", "find", "getMore", "getMore", "ping")
                    sent.map { it.command["lsid"] }.toSet() shouldBe setOf(session.lsid)
                    sent.first().command.containsKey("txnNumber") shouldBe false // a standalone: no retryable writes
                    session.isDirty shouldBe false
                }
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        } finally {
            server.close()
        }
    }

    test("a session belongs to its cluster and cannot be used after it ended") {
        val server = WireServer.start()
        try {
            MongoCluster(uri(server)).use { a ->
                MongoCluster(uri(server)).use { b ->
                    val session = a.startSession()
                    shouldThrow<IllegalArgumentException> { b.runCommand("db", ping(), ReadPreference.PRIMARY, session) }
                    shouldThrow<IllegalArgumentException> { b.runCursorCommand("db", find(), RunCursorCommandOptions(session = session)) }
                    session.close()
                    session.isEnded shouldBe true
                    shouldThrow<IllegalStateException> { a.runCommand("db", ping(), ReadPreference.PRIMARY, session) }
                }
            }
        } finally {
            server.close()
        }
    }

    test("implicit sessions are reused last-in first-out; a network error makes the session dirty and it is discarded") {
        val server = WireServer.start()
        try {
            val recorder = EventRecorder()
            MongoCluster(MongoClusterSettings.fromUri(uri(server)), listOf(recorder)).use { cluster ->
                cluster.runCommand("db", ping())
                cluster.runCommand("db", ping())
                val lsids = recorder.ofType<CommandStartedEvent>().map { it.command["lsid"] }
                lsids[0] shouldNotBe null
                lsids[1] shouldBe lsids[0]
                server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["ping"], closeConnection: true}}"""))
                shouldThrow<MongoNetworkException> { cluster.runCommand("db", ping()) }
                cluster.runCommand("db", ping())
                val after = recorder.ofType<CommandStartedEvent>().map { it.command["lsid"] }
                after[2] shouldBe lsids[0]
                after[3] shouldNotBe lsids[0] // the dirty session was discarded
                val explicit = cluster.startSession()
                server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["ping"], closeConnection: true}}"""))
                shouldThrow<MongoNetworkException> { cluster.runCommand("db", ping(), ReadPreference.PRIMARY, explicit) }
                explicit.isDirty shouldBe true
                explicit.close()
                cluster.startSession().use { it.lsid shouldNotBe explicit.lsid }
            }
        } finally {
            server.close()
        }
    }

    test("no lsid to a server without session support; an explicit session there is an error") {
        val server = WireServer.start()
        server.hello = { ctx, cmd -> DefaultHello.standalone(ctx, cmd).apply { remove("logicalSessionTimeoutMinutes") } }
        try {
            val recorder = EventRecorder()
            MongoCluster(MongoClusterSettings.fromUri(uri(server)), listOf(recorder)).use { cluster ->
                cluster.runCommand("db", insert(3))
                cluster.runCursorCommand("db", find(), RunCursorCommandOptions(batchSize = 1)).toList().size shouldBe 3
                recorder.ofType<CommandStartedEvent>().none { it.command.containsKey("lsid") } shouldBe true
                cluster.startSession().use { session ->
                    shouldThrow<MongoSessionNotSupportedException> { cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session) }
                }
            }
        } finally {
            server.close()
        }
    }

    test("close ends the pooled sessions with endSessions in batches of at most 10,000") {
        val server = WireServer.start()
        val ended = Collections.synchronizedList(ArrayList<BsonDocument>())
        server.handler = { ctx, _, cmd ->
            if (ctx.commandName == "endSessions") ended.add(cmd)
            null
        }
        try {
            val cluster = MongoCluster(uri(server))
            cluster.runCommand("db", ping()) // the topology knows the server
            val sessions = (0 until 10_001).map { cluster.startSession() }
            sessions.forEach { it.close() }
            cluster.closeAndCheckNoCoroutines()
            // the first explicit session reuses the ping's implicit one: 10,001 server sessions in the pool
            ended.map { it.getArray("endSessions").size } shouldBe listOf(10_000, 1)
            ended.flatMap { it.getArray("endSessions") }.toSet().size shouldBe 10_001
        } finally {
            server.close()
        }
    }

    test("ending an explicit session while its cursor is open: the getMores keep its lsid, and no other session gets the server session until the cursor ends") {
        val server = WireServer.start()
        try {
            val recorder = EventRecorder()
            MongoCluster(MongoClusterSettings.fromUri(uri(server)), listOf(recorder)).use { cluster ->
                cluster.runCommand("db", insert(6))
                val session = cluster.startSession()
                val lsid = session.lsid
                val docs = ArrayList<BsonDocument>()
                cluster.runCursorCommand("db", find(), RunCursorCommandOptions(session = session, batchSize = 2)).collect { d ->
                    docs.add(d)
                    if (docs.size == 1) {
                        session.close() // endSession with the cursor still open
                        shouldThrow<IllegalStateException> { cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session) }
                        cluster.runCommand("db", ping()) // an implicit session meanwhile
                        cluster.startSession().use { other -> other.lsid shouldNotBe lsid }
                    }
                }
                docs.size shouldBe 6
                val sent = recorder.ofType<CommandStartedEvent>()
                sent.filter { it.commandName == "getMore" }.map { it.command["lsid"] }.toSet() shouldBe setOf(lsid)
                sent.filter { it.commandName == "ping" }.map { it.command["lsid"] }.single() shouldNotBe lsid
                // the cursor is exhausted: the server session is back in the pool, the most recently released
                cluster.startSession().use { it.lsid shouldBe lsid }
            }
        } finally {
            server.close()
        }
    }

    test("a command cut off by timeoutMS while in flight makes its session dirty (the server's view of the session is unknown)") {
        val server = WireServer.start()
        try {
            MongoCluster(MongoClusterSettings.fromUri(uri(server))).use { cluster ->
                cluster.runCommand("db", ping())
                val session = cluster.startSession()
                server.configureFailPoint(
                    BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["ping"], blockConnection: true, blockTimeMS: 2000}}"""),
                )
                shouldThrow<MongoOperationTimeoutException> { cluster.runCommand("db", ping(), ReadPreference.PRIMARY, session, timeoutMS = 300) }
                session.isDirty shouldBe true
                session.close()
                cluster.startSession().use { it.lsid shouldNotBe session.lsid }
            }
        } finally {
            server.close()
        }
    }

    test("endSessions errors are ignored, a failed connection handshake included: the cluster still closes") {
        val server = WireServer.start()
        try {
            val cluster = MongoCluster(uri(server))
            cluster.runCommand("db", ping()) // an implicit session in the pool: close sends endSessions
            var closing: Result<Unit>? = null
            runCatching { // the operation holding the connection is interrupted by the close
                coroutineScope {
                    cluster.withConnection { _ ->
                        // the only connection is in use: endSessions needs a new one, whose handshake now fails
                        server.hello = { ctx, cmd -> DefaultHello.standalone(ctx, cmd).apply { put("maxWireVersion", BsonInt32(2)) } }
                        closing = async { runCatching { cluster.closeSuspending() } }.await()
                    }
                }
            }
            closing.shouldNotBeNull().exceptionOrNull() shouldBe null
            ClusterInternals.rootJob(cluster).isCompleted shouldBe true
        } finally {
            server.close()
        }
    }
})
