@file:OptIn(InternalMooringApi::class)

package dev.mooring.events

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import java.util.Collections

class StructuredLogSpec : FunSpec({
    fun collector(): Pair<MutableList<LogMessage>, LogSink> {
        val got = Collections.synchronizedList(ArrayList<LogMessage>())
        return got to LogSink { got += it }
    }

    test("the sink receives component, level, message and the non-null key-values in order") {
        val (got, sink) = collector()
        val log = StructuredLog("connection", LoggingSettings(sink, mapOf(LogComponent.CONNECTION to LogLevel.DEBUG)))
        log.debug("Connection created") {
            put("serverHost", "h")
            put("serverPort", 27017)
            put("absent", null)
        }
        got.size shouldBe 1
        got[0].component shouldBe LogComponent.CONNECTION
        got[0].level shouldBe LogLevel.DEBUG
        got[0].message shouldBe "Connection created"
        got[0].data.entries.map { it.key to it.value } shouldBe listOf("serverHost" to "h", "serverPort" to 27017)
    }

    test("per-component thresholds: a component at info does not receive debug, another component off receives nothing") {
        val (got, sink) = collector()
        val settings = LoggingSettings(sink, mapOf(LogComponent.SERVER_SELECTION to LogLevel.INFORMATIONAL))
        val selection = StructuredLog("serverSelection", settings)
        val topology = StructuredLog("topology", settings)
        var built = 0
        selection.debug("Server selection started") { built++ }
        topology.info("not wanted") { built++ }
        selection.info("Waiting for suitable server to become available") { put("remainingTimeMS", 5) }
        got.map { it.message } shouldBe listOf("Waiting for suitable server to become available")
        got[0].level shouldBe LogLevel.INFORMATIONAL
        selection.isEnabled(LogLevel.WARNING) shouldBe true
    }

    test("with no sink and SLF4J below the level, the fields are never built") {
        val log = StructuredLog("command")
        var built = 0
        log.log(LogLevel.TRACE, "x") { built++ }
        built shouldBe 0
    }

    test("a throwing sink never breaks the caller") {
        val log = StructuredLog("topology", LoggingSettings(LogSink { error("boom") }, defaultLevel = LogLevel.TRACE))
        log.debug("Starting topology monitoring") { put("topologyId", "t") }
    }

    test("documents are truncated to maxDocumentLength with a trailing ellipsis, never inside a surrogate pair") {
        val s = LoggingSettings(maxDocumentLength = 5)
        s.truncate("{\"a\":1}") shouldBe "{\"a\":..."
        s.truncate("{}") shouldBe "{}"
        LoggingSettings(maxDocumentLength = 2).truncate("a\uD83D\uDE00b") shouldBe "a..."
        LoggingSettings(maxDocumentLength = 0).truncate("{}") shouldBe "..."
        StructuredLog("command", s).document("123456") shouldBe "12345..."
        shouldThrow<IllegalArgumentException> { LoggingSettings(maxDocumentLength = -1) }
    }

    test("levels and components parse the spec names and reject others with a typed error") {
        LogLevel.fromSpecName("warn") shouldBe LogLevel.WARNING
        LogLevel.fromSpecName("Info") shouldBe LogLevel.INFORMATIONAL
        LogLevel.DEBUG.admits(LogLevel.INFORMATIONAL) shouldBe true
        LogLevel.INFORMATIONAL.admits(LogLevel.DEBUG) shouldBe false
        LogLevel.OFF.admits(LogLevel.EMERGENCY) shouldBe false
        LogComponent.fromSpecName("serverSelection") shouldBe LogComponent.SERVER_SELECTION
        shouldThrow<IllegalArgumentException> { LogLevel.fromSpecName("loud") }
        shouldThrow<IllegalArgumentException> { StructuredLog("nope") }
    }

    test("a sink without a threshold for its component receives nothing by default") {
        val (got, sink) = collector()
        StructuredLog("topology", LoggingSettings(sink)).debug("x") { }
        got.shouldBeEmpty()
    }
})
