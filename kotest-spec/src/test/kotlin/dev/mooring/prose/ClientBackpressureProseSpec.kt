package dev.mooring.prose

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * The client-backpressure README prose tests (and the retry rules behind them) against a test-kit
 * server whose fail point answers with the overload labels. Durations are only ever checked as
 * lower bounds: a backoff never sleeps less than it says.
 */
class ClientBackpressureProseSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun overloadFailPoint(command: String, code: Int, labels: String = "'SystemOverloadedError', 'RetryableError'") = BsonDocument.parse(
        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['$command'], errorCode: $code, errorLabels: [$labels]}}",
    )

    fun find() = BsonDocument("find", BsonString("coll")).append("filter", BsonDocument())
    fun insert() = BsonDocument("insert", BsonString("coll")).append("documents", BsonArray(listOf(BsonDocument("a", BsonInt32(1)))))

    suspend fun withCluster(options: String = "", block: suspend (WireServer, MongoCluster, EventRecorder) -> Unit) {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?$options"), listOf(recorder))
            try {
                block(server, cluster, recorder)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("backpressure prose Test 1: operation retry uses exponential backoff (jitter 0: no wait; jitter ~1: at least 0.2 s + 0.4 s)") {
        withCluster { server, cluster, recorder ->
            ClusterInternals.setOverloadJitter(cluster) { 0.0 }
            server.configureFailPoint(overloadFailPoint("insert", 2))
            shouldThrow<MongoCommandException> { cluster.runRetryableWrite("db", insert()) }
            ClusterInternals.setOverloadJitter(cluster) { Math.nextDown(1.0) }
            val start = System.nanoTime()
            shouldThrow<MongoCommandException> { cluster.runRetryableWrite("db", insert()) }
            val elapsedMs = (System.nanoTime() - start) / 1_000_000
            // two backoffs: (1 - ulp) * 200 ms and (1 - ulp) * 400 ms, each truncated to whole milliseconds
            elapsedMs shouldBeGreaterThanOrEqual 598L
            recorder.ofType<CommandStartedEvent>() shouldHaveSize 6
        }
    }

    /** A find failing with a retryable overload error every time: the labels reach the caller after [started] attempts. */
    suspend fun findRetriedAtMost(options: String, started: Int) = withCluster(options) { server, cluster, recorder ->
        ClusterInternals.setOverloadJitter(cluster) { 0.0 }
        server.configureFailPoint(overloadFailPoint("find", 462))
        val e = shouldThrow<MongoCommandException> { cluster.runRetryableRead("db", find()) }
        e.hasErrorLabel("RetryableError") shouldBe true
        e.hasErrorLabel("SystemOverloadedError") shouldBe true
        recorder.ofType<CommandStartedEvent>() shouldHaveSize started
    }

    test("backpressure prose Test 3: overload errors are retried at most MAX_RETRIES (2) times") {
        findRetriedAtMost("", 3)
    }

    test("backpressure prose Test 4: overload errors are retried at most maxAdaptiveRetries times when configured") {
        findRetriedAtMost("maxAdaptiveRetries=1", 2)
    }

    test("backpressure prose Test 5: a server-supplied baseBackoffMS replaces the base backoff") {
        withCluster { server, cluster, recorder ->
            ClusterInternals.setOverloadJitter(cluster) { Math.nextDown(1.0) }
            server.configureFailPoint(overloadFailPoint("insert", 462))
            var start = System.nanoTime()
            shouldThrow<MongoCommandException> { cluster.runRetryableWrite("db", insert()) }
            ((System.nanoTime() - start) / 1_000_000) shouldBeGreaterThanOrEqual 598L
            cluster.runCommand("admin", BsonDocument("setParameter", BsonInt32(1)).append("externalClientBaseBackoffMS", BsonInt32(50)))
            start = System.nanoTime()
            val e = shouldThrow<MongoCommandException> { cluster.runRetryableWrite("db", insert()) }
            ((System.nanoTime() - start) / 1_000_000) shouldBeGreaterThanOrEqual 298L
            e.response.getNumber("baseBackoffMS").intValue() shouldBe 50
            cluster.runCommand("admin", BsonDocument("setParameter", BsonInt32(1)).append("externalClientBaseBackoffMS", BsonInt32(0)))
            recorder.ofType<CommandFailedEvent>().count { it.commandName == "insert" } shouldBe 6
        }
    }

    test("every command is retried on overload: runCommand with retryReads and retryWrites; not with either off") {
        withCluster { server, cluster, recorder ->
            ClusterInternals.setOverloadJitter(cluster) { 0.0 }
            server.configureFailPoint(overloadFailPoint("ping", 462))
            shouldThrow<MongoCommandException> { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
            recorder.ofType<CommandStartedEvent>().count { it.commandName == "ping" } shouldBe 3
        }
        for (off in listOf("retryReads=false", "retryWrites=false")) {
            withCluster(off) { server, cluster, recorder ->
                server.configureFailPoint(overloadFailPoint("ping", 462))
                shouldThrow<MongoCommandException> { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
                recorder.ofType<CommandStartedEvent>().count { it.commandName == "ping" } shouldBe 1
            }
        }
    }

    test("an overload error without RetryableError, or a RetryableError without the overload label, is not retried by this policy") {
        for (labels in listOf("'SystemOverloadedError'", "'RetryableError'")) {
            withCluster { server, cluster, recorder ->
                server.configureFailPoint(overloadFailPoint("find", 2, labels))
                shouldThrow<MongoCommandException> { cluster.runRetryableRead("db", find()) }
                recorder.ofType<CommandStartedEvent>() shouldHaveSize 1
            }
        }
    }

    test("each attempt checks its connection in before the retry (the pool is not held through the backoff)") {
        withCluster { server, cluster, recorder ->
            ClusterInternals.setOverloadJitter(cluster) { 0.0 }
            server.configureFailPoint(overloadFailPoint("find", 2))
            shouldThrow<MongoCommandException> { cluster.runRetryableRead("db", find()) }
            val checkouts = recorder.events.filter { it is ConnectionCheckedOutEvent || it is ConnectionCheckedInEvent }.map { it::class.simpleName }
            checkouts shouldBe List(3) { listOf("ConnectionCheckedOutEvent", "ConnectionCheckedInEvent") }.flatten()
        }
    }
})
