package dev.mooring.sdam.cluster

import dev.mooring.events.LogComponent
import dev.mooring.events.LogLevel
import dev.mooring.events.LogMessage
import dev.mooring.events.LogSink
import dev.mooring.events.LoggingSettings
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.net.ServerSocket
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/** A client's LogSink (logging.md) receives its own messages, per component threshold, with documents truncated. */
class ClusterLogSinkSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    fun capture(levels: Map<LogComponent, LogLevel>, maxDocumentLength: Int = LoggingSettings.DEFAULT_MAX_DOCUMENT_LENGTH): Pair<MutableList<LogMessage>, LoggingSettings> {
        val got = Collections.synchronizedList(ArrayList<LogMessage>())
        return got to LoggingSettings(LogSink { got += it }, levels, maxDocumentLength = maxDocumentLength)
    }

    fun unusedPort(): Int = ServerSocket(0).use { it.localPort }

    test("server selection at info threshold receives only the waiting message; at debug also started and failed") {
        val port = unusedPort()
        for ((level, expected) in listOf(
            LogLevel.INFORMATIONAL to listOf("Waiting for suitable server to become available"),
            LogLevel.DEBUG to listOf("Server selection started", "Waiting for suitable server to become available", "Server selection failed"),
        )) {
            val (got, logging) = capture(mapOf(LogComponent.SERVER_SELECTION to level))
            val settings = MongoClusterSettings.fromUri("mongodb://127.0.0.1:$port/?serverSelectionTimeoutMS=600&connectTimeoutMS=200").copy(logging = logging)
            MongoCluster(settings).use { cluster ->
                shouldThrow<MongoServerSelectionTimeoutException> { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
            }
            synchronized(got) { got.map { it.message } } shouldBe expected
            got.all { it.component == LogComponent.SERVER_SELECTION } shouldBe true
            val waiting = got.single { it.level == LogLevel.INFORMATIONAL }
            waiting.data["operation"] shouldBe "ping"
            ((waiting.data["remainingTimeMS"] as Long) in 0L..600L) shouldBe true
        }
    }

    test("two clients in one JVM: each sink sees only its own client's connection messages") {
        val server = WireServer.start()
        try {
            val (a, la) = capture(mapOf(LogComponent.CONNECTION to LogLevel.DEBUG))
            val (b, lb) = capture(mapOf(LogComponent.TOPOLOGY to LogLevel.DEBUG))
            MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/").copy(logging = la)).use { ca ->
                MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/").copy(logging = lb)).use { cb ->
                    ca.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
                    cb.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
                }
            }
            synchronized(a) { a.map { it.component }.toSet() } shouldBe setOf(LogComponent.CONNECTION)
            // the ping, and endSessions for its pooled implicit session at close
            synchronized(a) { a.count { it.message == "Connection checked out" } } shouldBe 2
            synchronized(b) { b.map { it.component }.toSet() } shouldBe setOf(LogComponent.TOPOLOGY)
        } finally {
            server.close()
        }
    }

    test("a heartbeat reply is logged whole, as parseable relaxed extended JSON, however small maxDocumentLength is") {
        val server = WireServer.start()
        try {
            val (got, logging) = capture(mapOf(LogComponent.TOPOLOGY to LogLevel.DEBUG), maxDocumentLength = 20)
            MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/").copy(logging = logging)).use {
                withTimeout(10.seconds) { while (synchronized(got) { got.none { m -> m.message == "Server heartbeat succeeded" } }) delay(5) }
            }
            val reply = synchronized(got) { got.first { it.message == "Server heartbeat succeeded" } }.data["reply"] as String
            val parsed = BsonDocument.parse(reply)
            parsed.getNumber("ok").intValue() shouldBe 1
            parsed.containsKey("maxWireVersion") shouldBe true
            synchronized(got) { got.map { it.message } } shouldContain "Starting topology monitoring"
        } finally {
            server.close()
        }
    }
})
