package dev.mooring.tracing

import dev.mooring.cmap.internal.connection.DriverVersion
import dev.mooring.java.MongoClusters
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.TracingSettings
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.extension.kotlin.asContextElement
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.tracing.CallerTracingContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withContext
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * open-telemetry.md for Mooring's operations, against the SDK's in-memory exporter: operation
 * and command spans, their names, nesting under the caller's span (a coroutine that hops threads,
 * a Java caller's current context), attributes, errors on the right span, retries as separate
 * command spans, and where the operation waited (span events).
 */
class TracingSpec : FunSpec({
    val exporter = InMemorySpanExporter.create()
    val sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
        .build()
    val caller = sdk.getTracer("test")
    lateinit var server: WireServer

    beforeSpec {
        GlobalOpenTelemetry.resetForTest()
        GlobalOpenTelemetry.set(sdk)
        server = WireServer.start()
    }
    afterSpec {
        server.close()
        GlobalOpenTelemetry.resetForTest()
    }
    beforeTest { exporter.reset(); server.clearFailPoint() }

    fun settings(tracing: TracingSettings) = MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true&heartbeatFrequencyMS=500")
        .copy(tracing = tracing)
    fun spans(): List<SpanData> = exporter.finishedSpanItems
    /** Runs [check] on the finished spans, showing them all when it fails. */
    fun withSpans(check: (List<SpanData>) -> Unit) {
        val all = spans()
        withClue(all.joinToString("\n") { "${it.name} ${it.spanId} <- ${it.parentSpanId} ${it.attributes}" }) { check(all) }
    }
    fun SpanData.attr(key: String): Any? = attributes.asMap().entries.firstOrNull { it.key.key == key }?.value
    fun SpanData.shouldHave(vararg expected: Pair<String, Any?>) {
        expected.associate { (k, _) -> k to attr(k) } shouldBe expected.toMap()
    }
    fun failFindOnce(code: Int) = server.configureFailPoint(
        BsonDocument("configureFailPoint", BsonString("failCommand")).append("mode", BsonDocument("times", BsonInt32(1)))
            .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("find")))).append("errorCode", BsonInt32(code))),
    )
    val find = BsonDocument("find", BsonString("items")).append("filter", BsonDocument("_id", BsonInt32(1)))

    test("Kotlin: a retryable read inside the caller's span, hopping threads, retried once: one operation span, two command spans") {
        MongoCluster(settings(TracingSettings(enabled = true, queryTextMaxLength = 20))).use { cluster ->
            val parent = caller.spanBuilder("caller").startSpan()
            withContext(parent.asContextElement()) {
                withContext(Dispatchers.IO) {
                    failFindOnce(6) // HostUnreachable: a retryable read error
                    cluster.runRetryableRead("db", find)
                }
            }
            parent.end()
        }
        withSpans { all ->
            val callerSpan = all.single { it.name == "caller" }
            val op = all.single { it.name == "find db.items" }
            op.parentSpanId shouldBe callerSpan.spanId
            op.traceId shouldBe callerSpan.traceId
            op.kind shouldBe SpanKind.CLIENT
            op.shouldHave(
                "db.system.name" to "mongodb", "db.namespace" to "db", "db.collection.name" to "items",
                "db.operation.name" to "find", "db.operation.summary" to "find db.items",
            )
            op.status.statusCode shouldBe StatusCode.UNSET
            // open-telemetry.md "Tracer Attributes": the scope's version is the handshake's client.driver.version
            op.instrumentationScopeInfo.name shouldBe "dev.mooring"
            op.instrumentationScopeInfo.version shouldBe DriverVersion.value
            val commands = all.filter { it.name == "find" }.sortedBy { it.startEpochNanos }
            commands shouldHaveSize 2
            commands.forEach { c ->
                c.parentSpanId shouldBe op.spanId
                c.kind shouldBe SpanKind.CLIENT
                c.shouldHave(
                    "db.system.name" to "mongodb", "db.namespace" to "db", "db.collection.name" to "items", "db.command.name" to "find",
                    "db.query.summary" to "find db.items", "server.address" to "127.0.0.1", "server.port" to server.port.toLong(),
                    "network.transport" to "tcp",
                )
                c.attr("db.mongodb.driver_connection_id").shouldNotBeNull()
                c.attr("db.query.text") shouldBe """{"find": "items", "f...""" // 20 characters and logging.md's ellipsis
            }
            commands[0].status.statusCode shouldBe StatusCode.ERROR
            commands[0].attr("db.response.status_code") shouldBe "6"
            (commands[0].attr("exception.type") as String) shouldStartWith "dev.mooring."
            commands[1].status.statusCode shouldBe StatusCode.UNSET
            commands[1].attr("db.response.status_code") shouldBe null
            // where the operation waited: selection and checkout as events of the operation span
            val events = op.events.map { it.name }
            events.filter { it == "server selected" } shouldHaveSize 2
            events.filter { it == "connection checked out" } shouldHaveSize 2
            op.events.first { it.name == "connection checked out" }.attributes.get(AttributeKey.booleanKey("mooring.connection.new")) shouldBe true
        }
    }

    test("Java: runCommand's future under the calling thread's current span; an error on the operation and command spans") {
        MongoClusters.create(MongoClusters.settingsBuilder(settings(TracingSettings())).tracing(true, 0)).use { cluster ->
            val parent = caller.spanBuilder("java caller").startSpan()
            parent.makeCurrent().use {
                cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))).join()
                runCatching { cluster.runCommand("db", BsonDocument("noSuchCommand", BsonInt32(1))).join() }.isFailure shouldBe true
            }
            parent.end()
        }
        withSpans { all ->
            val callerSpan = all.single { it.name == "java caller" }
            val ping = all.single { it.name == "runCommand admin" }
            ping.parentSpanId shouldBe callerSpan.spanId
            ping.attr("db.operation.name") shouldBe "runCommand"
            ping.attr("db.collection.name") shouldBe null
            val pingCommand = all.single { it.name == "ping" }
            pingCommand.parentSpanId shouldBe ping.spanId
            pingCommand.attr("db.query.summary") shouldBe "ping admin"
            pingCommand.attr("db.query.text") shouldBe null
            val failed = all.single { it.name == "runCommand db" }
            failed.parentSpanId shouldBe callerSpan.spanId
            failed.status.statusCode shouldBe StatusCode.ERROR
            val failedCommand = all.single { it.name == "noSuchCommand" }
            failedCommand.parentSpanId shouldBe failed.spanId
            failedCommand.status.statusCode shouldBe StatusCode.ERROR
            failedCommand.attr("db.response.status_code") shouldBe "59"
        }
    }

    /** A `{times: 1}` overload error on [command]: runCommand retries it once (client-backpressure.md). */
    fun overloadOnce(command: String) = server.configureFailPoint(
        BsonDocument.parse(
            "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['$command'], errorCode: 462, " +
                "errorLabels: ['SystemOverloadedError', 'RetryableError']}}",
        ),
    )

    /** One operation span under [parent] with two command spans (the failed attempt, then the retry). */
    fun checkRetriedRunCommand(all: List<SpanData>, parent: String, operation: String, command: String) {
        val callerSpan = all.single { it.name == parent }
        val op = all.single { it.name == operation }
        op.parentSpanId shouldBe callerSpan.spanId
        op.traceId shouldBe callerSpan.traceId
        op.attr("db.operation.name") shouldBe "runCommand"
        op.status.statusCode shouldBe StatusCode.UNSET
        val commands = all.filter { it.name == command }.sortedBy { it.startEpochNanos }
        commands shouldHaveSize 2
        commands.forEach { it.parentSpanId shouldBe op.spanId }
        commands[0].status.statusCode shouldBe StatusCode.ERROR
        commands[0].attr("db.response.status_code") shouldBe "462"
        commands[1].status.statusCode shouldBe StatusCode.UNSET
        op.events.filter { it.name == "server selected" } shouldHaveSize 2
    }

    test("Kotlin: runCommand inside the caller's span, hopping threads, retried once after an overload error") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            val parent = caller.spanBuilder("kotlin caller").startSpan()
            withContext(parent.asContextElement()) {
                withContext(Dispatchers.IO) {
                    overloadOnce("count")
                    cluster.runCommand("db", BsonDocument("count", BsonString("items")))
                }
            }
            parent.end()
        }
        withSpans { all -> checkRetriedRunCommand(all, "kotlin caller", "runCommand db", "count") }
    }

    test("Java: runCommand's future under the calling thread's current span, retried once after an overload error") {
        MongoClusters.create(MongoClusters.settingsBuilder(settings(TracingSettings())).tracing(true, 0)).use { cluster ->
            val parent = caller.spanBuilder("java caller").startSpan()
            parent.makeCurrent().use {
                overloadOnce("count")
                cluster.runCommand("db", BsonDocument("count", BsonString("items"))).join()
            }
            parent.end()
        }
        withSpans { all -> checkRetriedRunCommand(all, "java caller", "runCommand db", "count") }
    }

    test("off: no spans at all, even with an SDK installed") {
        MongoCluster(settings(TracingSettings(enabled = false))).use { cluster ->
            val parent = caller.spanBuilder("caller").startSpan()
            withContext(parent.asContextElement()) { cluster.runCommand("db", BsonDocument("ping", BsonInt32(1))) }
            parent.end()
        }
        spans().map { it.name } shouldBe listOf("caller")
    }

    test("sensitive commands get no command span; withConnection is one operation span around its commands") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            cluster.withConnection { c ->
                c.command("admin", BsonDocument("ping", BsonInt32(1)))
                runCatching { c.command("admin", BsonDocument("saslStart", BsonInt32(1))) }
            }
        }
        withSpans { all ->
            val op = all.single { it.name == "withConnection" }
            all.filter { it.parentSpanId == op.spanId }.map { it.name } shouldBe listOf("ping")
        }
    }

    test("a cursor: the opening command's operation span carries the cursor id; each getMore is an operation span on the collection; killCursors and endSessions are nested in one too") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            cluster.runRetryableWrite("db", BsonDocument.parse("{insert: 'cursor', documents: [{_id: 1}, {_id: 2}, {_id: 3}, {_id: 4}, {_id: 5}]}"))
            exporter.reset()
            val find = BsonDocument.parse("{find: 'cursor', filter: {}, batchSize: 2}")
            cluster.runCursorCommand("db", find, RunCursorCommandOptions(batchSize = 2)).toList().size shouldBe 5
            // stopped early: the cursor is still open on the server, so closing it sends killCursors
            cluster.runCursorCommand("db", find, RunCursorCommandOptions(batchSize = 2)).take(3).toList().size shouldBe 3
        }
        withSpans { all ->
            val roots = all.filter { s -> all.none { it.spanId == s.parentSpanId } }.sortedBy { it.startEpochNanos }
            roots.map { it.name } shouldBe listOf(
                "find db.cursor", "getMore db.cursor", "getMore db.cursor", "find db.cursor", "getMore db.cursor", "killCursors db.cursor",
                "endSessions admin", // closing the cluster
            )
            fun children(op: SpanData) = all.filter { it.parentSpanId == op.spanId }
            val cursorId = roots[0].attr("db.mongodb.cursor_id") as Long
            (cursorId != 0L) shouldBe true
            children(roots[0]).single().attr("db.mongodb.cursor_id") shouldBe cursorId
            for (getMore in listOf(roots[1], roots[2])) {
                getMore.shouldHave("db.operation.name" to "getMore", "db.collection.name" to "cursor", "db.mongodb.cursor_id" to cursorId)
                children(getMore).single().shouldHave(
                    "db.command.name" to "getMore", "db.collection.name" to "cursor", "db.query.summary" to "getMore db.cursor",
                    "db.mongodb.cursor_id" to cursorId, // the drained reply's 0 does not replace the id sent
                )
            }
            val kill = roots[5]
            kill.shouldHave("db.operation.name" to "killCursors", "db.collection.name" to "cursor")
            children(kill).single().shouldHave("db.command.name" to "killCursors", "db.mongodb.cursor_id" to roots[3].attr("db.mongodb.cursor_id"))
            children(roots[6]).single().shouldHave("db.command.name" to "endSessions", "db.namespace" to "admin", "db.collection.name" to null)
        }
    }

    test("a failed command: error.type (the server's code) on its command span, not on the operation span") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            failFindOnce(8) // UnknownError: not retryable
            runCatching { cluster.runRetryableRead("db", find) }.isFailure shouldBe true
        }
        withSpans { all ->
            val op = all.single { it.name == "find db.items" }
            op.status.statusCode shouldBe StatusCode.ERROR
            op.attr("error.type") shouldBe null
            all.single { it.name == "find" }.shouldHave("db.response.status_code" to "8", "error.type" to "8")
        }
    }

    test("a sensitive command's failure: the operation span records the error's type and code, never its message or stack trace") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            runCatching { cluster.runCommand("admin", BsonDocument.parse("{saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: 'secret'}")) }
                .isFailure shouldBe true
        }
        withSpans { all ->
            val op = all.single { it.name == "runCommand admin" }
            all.filter { it.parentSpanId == op.spanId } shouldHaveSize 0 // no command span for a sensitive command
            op.status.statusCode shouldBe StatusCode.ERROR
            op.status.description shouldBe op.attr("exception.type")
            op.attr("exception.type").shouldNotBeNull()
            op.attr("exception.message") shouldBe null
            op.attr("exception.stacktrace") shouldBe null
            op.events.flatMap { e -> e.attributes.asMap().keys.map { it.key } }.filter { it == "exception.message" || it == "exception.stacktrace" } shouldBe emptyList()
        }
    }

    test("Java facade: the calling thread's context is carried into the operation only by a cluster that traces (nothing per call otherwise)") {
        val parent = caller.spanBuilder("java caller").startSpan()
        parent.makeCurrent().use {
            MongoCluster(settings(TracingSettings(enabled = false))).use { off ->
                CallerTracingContext.current(off) shouldBe EmptyCoroutineContext
            }
            MongoCluster(settings(TracingSettings(enabled = true))).use { on ->
                (CallerTracingContext.current(on) == EmptyCoroutineContext) shouldBe false
            }
        }
        parent.end()
    }

    test("a retry's server selection wait starts when the failed attempt ended, not when the operation started") {
        MongoCluster(settings(TracingSettings(enabled = true))).use { cluster ->
            failFindOnce(6) // HostUnreachable: retried once
            cluster.runRetryableRead("db", find)
        }
        withSpans { all ->
            val op = all.single { it.name == "find db.items" }
            val firstAttempt = all.filter { it.name == "find" }.minBy { it.startEpochNanos }
            val retrySelected = op.events.filter { it.name == "server selected" }.also { it shouldHaveSize 2 }[1]
            val waitMs = retrySelected.attributes.get(AttributeKey.doubleKey("mooring.selection.wait_ms"))!!
            // measured from no earlier than the failed attempt's end (the span clock and the wait share System.nanoTime)
            withClue("wait $waitMs ms, since the first attempt ended ${(retrySelected.epochNanos - firstAttempt.endEpochNanos) / 1e6} ms") {
                (waitMs * 1e6 <= (retrySelected.epochNanos - firstAttempt.endEpochNanos).toDouble()) shouldBe true
            }
        }
    }
})

