package dev.mooring.spec.unified

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.LogComponent
import dev.mooring.events.LogLevel
import dev.mooring.events.LogMessage
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import org.bson.BsonDocument

/** The runner's log matching must reject what the unified format rejects, or the logging tests could not fail. */
class LogCaptureSpec : FunSpec({
    fun j(s: String) = Json.parseToJsonElement(s)
    fun msg(message: String, data: Map<String, Any>, level: LogLevel = LogLevel.DEBUG) = LogMessage(LogComponent.TOPOLOGY, level, message, data)

    test("operators: \$\$exists, \$\$type lists, \$\$matchAsDocument with \$\$matchAsRoot") {
        LogDataMatch.matches(j("""{"a": {"${'$'}${'$'}exists": true}}"""), mapOf("a" to 1), root = true) shouldBe true
        LogDataMatch.matches(j("""{"a": {"${'$'}${'$'}exists": true}}"""), mapOf("b" to 1), root = true) shouldBe false
        LogDataMatch.matches(j("""{"a": {"${'$'}${'$'}exists": false}}"""), mapOf("a" to 1), root = true) shouldBe false
        LogDataMatch.matches(j("""{"p": {"${'$'}${'$'}type": ["int", "long"]}}"""), mapOf("p" to 27017), root = true) shouldBe true
        LogDataMatch.matches(j("""{"p": {"${'$'}${'$'}type": ["int", "long"]}}"""), mapOf("p" to "27017"), root = true) shouldBe false
        LogDataMatch.matches(j("""{"d": {"${'$'}${'$'}type": "double"}}"""), mapOf("d" to 1L), root = true) shouldBe false
        val reply = j("""{"r": {"${'$'}${'$'}matchAsDocument": {"${'$'}${'$'}matchAsRoot": {"ok": 1}}}}""")
        LogDataMatch.matches(reply, mapOf("r" to """{"ok": 1.0, "isWritablePrimary": true}"""), root = true) shouldBe true
        LogDataMatch.matches(reply, mapOf("r" to """{"ok": 0}"""), root = true) shouldBe false
        LogDataMatch.matches(reply, mapOf("r" to "not json"), root = true) shouldBe false
        shouldThrow<UnsupportedOperationException> { LogDataMatch.matches(j("""{"a": {"${'$'}${'$'}lte": 1}}"""), mapOf("a" to 1), root = true) }
    }

    test("extra keys are allowed in the root document only; values compare by type and value") {
        LogDataMatch.matches(j("""{"a": 1}"""), mapOf("a" to 1L, "extra" to "x"), root = true) shouldBe true
        LogDataMatch.matches(j("""{"n": {"a": 1}}"""), mapOf("n" to mapOf("a" to 1, "extra" to 2)), root = true) shouldBe false
        LogDataMatch.matches(j("""{"a": "1"}"""), mapOf("a" to 1), root = true) shouldBe false
        LogDataMatch.matches(j("""{"a": true}"""), mapOf("a" to true), root = true) shouldBe true
    }

    test("expect: ignoreMessages drops matches first, then messages match in order, extra messages fail unless ignoreExtraMessages") {
        val actual = listOf(msg("Starting topology monitoring", mapOf("topologyId" to "t")), msg("Server heartbeat started", emptyMap()), msg("Stopped topology monitoring", emptyMap()))
        val wanted = """[{"level": "debug", "component": "topology", "data": {"message": "Starting topology monitoring", "topologyId": {"${'$'}${'$'}exists": true}}},
                         {"level": "debug", "component": "topology", "data": {"message": "Stopped topology monitoring"}}]"""
        val ignoreHeartbeat = """[{"level": "debug", "component": "topology", "data": {"message": "Server heartbeat started"}}]"""
        LogCapture.expect(j("""{"client": "c", "ignoreMessages": $ignoreHeartbeat, "messages": $wanted}""").jsonObject, actual)
        shouldThrow<IllegalStateException> { LogCapture.expect(j("""{"client": "c", "messages": $wanted}""").jsonObject, actual) }
        val first = """[{"level": "debug", "component": "topology", "data": {"message": "Starting topology monitoring"}}]"""
        shouldThrow<IllegalStateException> { LogCapture.expect(j("""{"client": "c", "messages": $first}""").jsonObject, actual) }
        LogCapture.expect(j("""{"client": "c", "ignoreExtraMessages": true, "messages": $first}""").jsonObject, actual)
    }

    test("level and component must match; failureIsRedacted needs a failure of the right kind") {
        val info = j("""{"level": "info", "component": "topology", "data": {"message": "m"}}""").jsonObject
        LogCapture.messageMatches(info, msg("m", emptyMap())) shouldBe false
        LogCapture.messageMatches(info, msg("m", emptyMap(), LogLevel.INFORMATIONAL)) shouldBe true
        val selection = j("""{"level": "debug", "component": "serverSelection", "data": {"message": "m"}}""").jsonObject
        LogCapture.messageMatches(selection, msg("m", emptyMap())) shouldBe false
        val redacted = j("""{"level": "debug", "component": "topology", "failureIsRedacted": true, "data": {"message": "m"}}""").jsonObject
        LogCapture.messageMatches(redacted, msg("m", emptyMap())) shouldBe false
        val address = ServerAddress("localhost", 27017)
        val serverError = MongoCommandException(BsonDocument.parse("{ok: 0, code: 18, codeName: 'AuthenticationFailed', errmsg: 'secret'}"), address)
        val redactedServerError = MongoCommandException(BsonDocument.parse("{ok: 0, code: 18, codeName: 'AuthenticationFailed'}"), address)
        LogCapture.messageMatches(redacted, msg("m", mapOf("failure" to redactedServerError.toString()))) shouldBe true
        LogCapture.messageMatches(redacted, msg("m", mapOf("failure" to serverError.toString()))) shouldBe false
    }

    test("failureIsRedacted: false holds for a network error (not server-side: nothing to redact) and an unredacted server error") {
        val notRedacted = j("""{"level": "debug", "component": "command", "failureIsRedacted": false, "data": {"message": "Command failed"}}""").jsonObject
        fun failed(failure: Throwable) = LogMessage(LogComponent.COMMAND, LogLevel.DEBUG, "Command failed", mapOf("failure" to failure.toString()))
        val address = ServerAddress("localhost", 27017)
        LogCapture.messageMatches(notRedacted, failed(MongoNetworkException("network error running saslContinue", address))) shouldBe true
        LogCapture.messageMatches(notRedacted, failed(MongoCommandException(BsonDocument.parse("{ok: 0, code: 91, codeName: 'ShutdownInProgress', errmsg: 'going away'}"), address))) shouldBe true
        LogCapture.messageMatches(notRedacted, failed(MongoCommandException(BsonDocument.parse("{ok: 0, code: 91, codeName: 'ShutdownInProgress'}"), address))) shouldBe false
        LogCapture.messageMatches(notRedacted, LogMessage(LogComponent.COMMAND, LogLevel.DEBUG, "Command failed", emptyMap())) shouldBe false
    }
})
