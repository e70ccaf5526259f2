package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.CursorCloseCancellation
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.internal.cursor.CursorPage
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.launch
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** runCursorCommand under client-side-operations-timeout.md "Cursors": maxTimeMS per timeoutMode, error translation, validation, retries, limit. */
class CursorTimeoutSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun find(batchSize: Int = 10) = BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(batchSize))

    /** Runs [block] with a standalone test server holding 30 documents in db.c, a cluster connected to it (with [uriOptions]) and its recorder. */
    suspend fun onStandalone(uriOptions: String = "", block: suspend (WireServer, MongoCluster, EventRecorder) -> Unit) {
        val server = WireServer.start()
        try {
            val recorder = EventRecorder()
            MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true$uriOptions"), listOf(recorder)).use { cluster ->
                cluster.runCommand("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray((0 until 30).map { BsonDocument("_id", BsonInt32(it)) })))
                recorder.clear()
                block(server, cluster, recorder)
            }
        } finally {
            server.close()
        }
    }

    fun EventRecorder.started(name: String) = ofType<CommandStartedEvent>().filter { it.commandName == name }

    test("maxTimeMS: on the initial command in CURSOR_LIFETIME mode only; never on a getMore; killCursors gets a refreshed one") {
        onStandalone { _, cluster, recorder ->
            for ((mode, initialHasMaxTime) in listOf(null to true, TimeoutMode.CURSOR_LIFETIME to true, TimeoutMode.ITERATION to false)) {
                recorder.clear()
                cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMS = 60_000, timeoutMode = mode, batchSize = 10)).take(15).toList().size shouldBe 15
                val initial = recorder.started("find").single().command
                initial.containsKey("maxTimeMS") shouldBe initialHasMaxTime
                if (initialHasMaxTime) (initial.getNumber("maxTimeMS").longValue() in 1..60_000) shouldBe true
                recorder.started("getMore").single().command.containsKey("maxTimeMS") shouldBe false
                (recorder.started("killCursors").single().command.getNumber("maxTimeMS").longValue() in 1..60_000) shouldBe true
            }
            // without timeoutMS: the command as given, no maxTimeMS anywhere
            recorder.clear()
            cluster.runCursorCommand("db", find(), RunCursorCommandOptions(batchSize = 10)).take(15).toList()
            recorder.ofType<CommandStartedEvent>().none { it.command.containsKey("maxTimeMS") } shouldBe true
        }
    }

    test("tailable: no maxTimeMS on a non-await cursor; an await cursor's getMore gets min(maxAwaitTimeMS, remaining), its find the remaining time") {
        onStandalone { _, cluster, recorder ->
            val tailable = find().append("tailable", BsonBoolean.TRUE)
            cluster.runCursorCommand("db", tailable, RunCursorCommandOptions(timeoutMS = 60_000, cursorType = CursorType.TAILABLE, batchSize = 10)).take(15).toList()
            (recorder.started("find") + recorder.started("getMore")).none { it.command.containsKey("maxTimeMS") } shouldBe true
            recorder.clear()
            val await = tailable.clone().append("awaitData", BsonBoolean.TRUE)
            cluster.runCursorCommand("db", await, RunCursorCommandOptions(timeoutMS = 60_000, cursorType = CursorType.TAILABLE_AWAIT, maxTimeMS = 50, batchSize = 10))
                .take(15).toList()
            recorder.started("find").single().command.containsKey("maxTimeMS") shouldBe true
            recorder.started("getMore").single().command.getNumber("maxTimeMS").longValue() shouldBe 50
        }
    }

    test("MaxTimeMSExpired from the initial command or a getMore is a MongoOperationTimeoutException with timeoutMS, the server's error without") {
        onStandalone { server, cluster, _ ->
            for (command in listOf("find", "getMore")) {
                for (timeoutMS in listOf(60_000L, 0L, null)) {
                    server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["$command"], errorCode: 50}}"""))
                    val error = runCatching { cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMS = timeoutMS, batchSize = 10)).toList() }.exceptionOrNull()
                    if (timeoutMS == null) {
                        error.shouldBeInstanceOf<MongoCommandException>().code shouldBe 50
                    } else {
                        error.shouldBeInstanceOf<MongoOperationTimeoutException>().cause.shouldBeInstanceOf<MongoCommandException>().code shouldBe 50
                    }
                    server.clearFailPoint()
                }
            }
            cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
        }
    }

    test("refused client-side, nothing sent: timeoutMode without timeoutMS; ITERATION for an aggregate with \$out or \$merge") {
        onStandalone { _, cluster, recorder ->
            shouldThrow<IllegalArgumentException> { cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMode = TimeoutMode.CURSOR_LIFETIME)) }
            for (stage in listOf("\$out", "\$merge")) {
                val aggregate = BsonDocument("aggregate", BsonString("c")).append("pipeline", BsonArray(listOf(BsonDocument(stage, BsonString("out")))))
                    .append("cursor", BsonDocument())
                shouldThrow<IllegalArgumentException> {
                    cluster.runCursorCommand("db", aggregate, RunCursorCommandOptions(timeoutMS = 1_000, timeoutMode = TimeoutMode.ITERATION))
                }
            }
            recorder.ofType<CommandStartedEvent>().size shouldBe 0
        }
        // the cluster's timeoutMS makes timeoutMode valid
        onStandalone("&timeoutMS=60000") { _, cluster, _ ->
            cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMode = TimeoutMode.ITERATION)).toList().size shouldBe 30
        }
    }

    test("with timeoutMS (0 included) a retryable read's initial command is retried until it succeeds; without, once") {
        onStandalone { server, cluster, recorder ->
            for ((timeoutMS, finds) in listOf(0L to 4, 60_000L to 4)) {
                recorder.clear()
                server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 3}, data: {failCommands: ["find"], errorCode: 7}}"""))
                CursorPage.pages(cluster, "db", find(), RunCursorCommandOptions(timeoutMS = timeoutMS, batchSize = 10), retryableRead = true)
                    .toList().sumOf { it.documents.size } shouldBe 30
                recorder.started("find").size shouldBe finds
            }
            recorder.clear()
            server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 3}, data: {failCommands: ["find"], errorCode: 7}}"""))
            shouldThrow<MongoCommandException> { CursorPage.pages(cluster, "db", find(), RunCursorCommandOptions(batchSize = 10), retryableRead = true).toList() }
            recorder.started("find").size shouldBe 2
            server.clearFailPoint()
        }
    }

    test("a find helper's limit caps each getMore's batchSize to the documents still to return and ends the cursor there") {
        onStandalone { _, cluster, recorder ->
            val docs = CursorPage.pages(cluster, "db", find().append("limit", BsonInt32(25)), RunCursorCommandOptions(batchSize = 10), limit = 25)
                .toList().flatMap { it.documents }
            docs.map { it.getInt32("_id").value } shouldBe (0 until 25).toList()
            recorder.started("getMore").map { it.command.getInt32("batchSize").value } shouldBe listOf(10, 5)
        }
    }

    test("ITERATION: the getMores a tailable cursor sends over empty batches while awaiting its next document share one timeoutMS") {
        onStandalone { _, cluster, recorder ->
            val await = find(30).append("tailable", BsonBoolean.TRUE).append("awaitData", BsonBoolean.TRUE)
            val docs = ArrayList<BsonDocument>()
            val error = withTimeoutOrNull(30.seconds) {
                shouldThrow<MongoOperationTimeoutException> {
                    cluster.runCursorCommand("db", await, RunCursorCommandOptions(timeoutMS = 1_000, cursorType = CursorType.TAILABLE_AWAIT, maxTimeMS = 300))
                        .collect { docs.add(it) }
                }
            }
            error.shouldBeInstanceOf<MongoOperationTimeoutException>() // not an endless series of getMores, each with a fresh timeoutMS
            docs.size shouldBe 30
            // each getMore waited its maxTimeMS on the server for data that never came: together at most the one timeoutMS
            val waits = recorder.started("getMore").map { it.command.getNumber("maxTimeMS").longValue() }
            (waits.size >= 2) shouldBe true
            (waits.sum() <= 1_000) shouldBe true
        }
    }

    test("a collector cancelled with CursorCloseCancellation closes the cursor under that close's timeoutMS, not the cursor's") {
        onStandalone { _, cluster, recorder ->
            // the killCursors' maxTimeMS shows which timeoutMS it ran under: the cursor's 60 s, or the close's
            for ((closeTimeoutMS, range) in listOf(600_000L to 60_001L..600_000L, 1_000L to 1L..1_000L, null to 1L..60_000L)) {
                recorder.clear()
                coroutineScope {
                    val firstBatch = CompletableDeferred<Unit>()
                    val collector = launch {
                        cluster.runCursorCommand("db", find(), RunCursorCommandOptions(timeoutMS = 60_000, batchSize = 10)).collect {
                            firstBatch.complete(Unit)
                            awaitCancellation()
                        }
                    }
                    firstBatch.await()
                    if (closeTimeoutMS != null) collector.cancel(CursorCloseCancellation(closeTimeoutMS)) else collector.cancel()
                    collector.join()
                }
                (recorder.started("killCursors").single().command.getNumber("maxTimeMS").longValue() in range) shouldBe true
            }
        }
    }
})
