package dev.mooring.spec.unified

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.LogComponent
import dev.mooring.events.LogLevel
import dev.mooring.events.LogMessage
import dev.mooring.events.LogSink
import dev.mooring.events.LoggingSettings
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull
import java.util.Collections

/**
 * A client entity's log collector (unified format `observeLogMessages`): a [LogSink] with the
 * entity's per-component thresholds, recording every message it receives in order. Thread-safe.
 */
class LogCapture(observe: JsonObject) {
    private val messages = Collections.synchronizedList(ArrayList<LogMessage>())

    /** The client's logging settings: this capture as the sink, the observed components at their levels. */
    val settings: LoggingSettings = LoggingSettings(
        sink = LogSink { messages += it },
        componentLevels = observe.entries.associate { (c, l) -> LogComponent.fromSpecName(c) to LogLevel.fromSpecName(l.jsonPrimitive.content) },
    )

    /** The messages received so far. */
    fun snapshot(): List<LogMessage> = synchronized(messages) { messages.toList() }

    companion object {
        /**
         * Asserts one `expectedLogMessagesForClient` against [actual] (unified-test-format.md):
         * drop the messages matching any of `ignoreMessages`, then `messages` must match the rest
         * in order, exactly as many unless `ignoreExtraMessages`.
         */
        fun expect(expected: JsonObject, actual: List<LogMessage>) {
            val ignore = expected["ignoreMessages"]?.jsonArray?.map { it.jsonObject } ?: emptyList()
            val wanted = expected["messages"]!!.jsonArray.map { it.jsonObject }
            val ignoreExtra = (expected["ignoreExtraMessages"] as? JsonPrimitive)?.booleanOrNull ?: false
            val kept = actual.filter { m -> ignore.none { messageMatches(it, m) } }
            check(kept.size >= wanted.size && (ignoreExtra || kept.size == wanted.size)) {
                "expected ${wanted.size} log messages ${wanted.map { it["data"]?.jsonObject?.get("message") }}" +
                    "${if (ignoreExtra) " or more" else ""} but got ${kept.size}: ${kept.map { it.message }}"
            }
            wanted.forEachIndexed { i, w ->
                check(messageMatches(w, kept[i])) { "log message $i: expected $w, got ${kept[i]}" }
            }
        }

        /** True when [actual] is the `expectedLogMessage` [expected]: level, component, data as a root document, failureIsRedacted. */
        fun messageMatches(expected: JsonObject, actual: LogMessage): Boolean {
            for (key in expected.keys) {
                if (key !in setOf("level", "component", "data", "failureIsRedacted")) throw UnsupportedOperationException("expectedLogMessage.$key")
            }
            if (LogLevel.fromSpecName(expected["level"]!!.jsonPrimitive.content) != actual.level) return false
            if (LogComponent.fromSpecName(expected["component"]!!.jsonPrimitive.content) != actual.component) return false
            val data = LinkedHashMap<String, Any>(actual.data)
            data["message"] = actual.message
            if (!LogDataMatch.matches(expected["data"]!!, data, root = true)) return false
            val redacted = (expected["failureIsRedacted"] as? JsonPrimitive)?.booleanOrNull ?: return true
            val failure = actual.data["failure"] ?: return false
            return isRedacted(failure) == redacted
        }

        /**
         * Mooring logs failures as the exception's text (`Throwable.toString()`). Command logging's
         * security rules redact only a *server-side* error: a [MongoCommandException] of a sensitive
         * command keeps its code, codeName and labels and loses the server's message, so its text
         * ends in "no message". Any other failure (a network error, a timeout) has nothing to
         * redact and is logged as it is, so it is never a redacted failure.
         */
        internal fun isRedacted(failure: Any): Boolean = REDACTED_SERVER_ERROR.matches(failure.toString())

        private val REDACTED_SERVER_ERROR =
            Regex("""^${Regex.escape(MongoCommandException::class.java.name)}: Command failed on \S+ with error -?\d+( \([^)]*\))?: no message$""")
    }
}

/**
 * The unified format's "Evaluating Matches" rules for log message data: Kotlin values as the log
 * sink delivers them (strings, numbers, booleans, maps, lists) against expected JSON with the
 * operators `$$exists`, `$$type`, `$$matchAsDocument`, `$$matchAsRoot` and `$$unsetOrMatches`.
 * Root documents may have extra keys; embedded ones may not. Unknown operators fail loudly.
 */
object LogDataMatch {
    fun matches(expected: JsonElement, actual: Any?, root: Boolean = false): Boolean {
        if (expected is JsonObject && expected.size == 1 && expected.keys.single().startsWith("$$")) {
            return operator(expected.keys.single(), expected.values.single(), actual)
        }
        return when (expected) {
            is JsonObject -> {
                val doc = asMap(actual) ?: return false
                for ((k, v) in expected) {
                    if (v is JsonObject && v.keys.singleOrNull() == "\$\$exists") {
                        if (!operator("\$\$exists", v.values.single(), doc[k], present = doc.containsKey(k))) return false
                        continue
                    }
                    if (!doc.containsKey(k)) {
                        if (v is JsonObject && v.keys.singleOrNull() == "\$\$unsetOrMatches") continue
                        return false
                    }
                    if (!matches(v, doc[k])) return false
                }
                root || doc.keys.all { it in expected.keys }
            }
            is JsonArray -> {
                val list = actual as? List<*> ?: return false
                list.size == expected.size && expected.indices.all { matches(expected[it], list[it]) }
            }
            JsonNull -> actual == null
            is JsonPrimitive -> primitiveEquals(expected, actual)
        }
    }

    private fun operator(name: String, arg: JsonElement, actual: Any?, present: Boolean = actual != null): Boolean = when (name) {
        "\$\$exists" -> arg.jsonPrimitive.booleanOrNull == present
        "\$\$type" -> {
            val types = if (arg is JsonArray) arg.map { it.jsonPrimitive.content } else listOf(arg.jsonPrimitive.content)
            types.any { isType(it, actual) }
        }
        "\$\$matchAsDocument" -> {
            val text = actual as? String ?: return false
            val parsed = runCatching { Json.parseToJsonElement(text) }.getOrNull() as? JsonObject ?: return false
            matches(arg, jsonToKotlin(parsed))
        }
        "\$\$matchAsRoot" -> matches(arg, actual, root = true)
        "\$\$unsetOrMatches" -> actual == null || matches(arg, actual)
        else -> throw UnsupportedOperationException("match operator $name")
    }

    private fun isType(type: String, v: Any?): Boolean = when (type) {
        "string" -> v is String
        "int" -> v is Int || v is Short || v is Byte
        "long" -> v is Long
        "double" -> v is Double || v is Float
        "bool" -> v is Boolean
        "object" -> v is Map<*, *>
        "array" -> v is List<*>
        "null" -> v == null
        else -> throw UnsupportedOperationException("\$\$type $type")
    }

    private fun primitiveEquals(expected: JsonPrimitive, actual: Any?): Boolean = when {
        expected.isString -> actual is String && actual == expected.content
        actual is Boolean -> expected.booleanOrNull == actual
        actual is Number -> {
            val l = expected.longOrNull
            if (l != null && actual !is Double && actual !is Float) actual.toLong() == l else expected.doubleOrNull == actual.toDouble()
        }
        else -> false
    }

    @Suppress("UNCHECKED_CAST")
    private fun asMap(v: Any?): Map<String, Any?>? = v as? Map<String, Any?>

    /** Relaxed extended JSON parsed to Kotlin values: `{"$numberLong": ...}` etc. become numbers. */
    private fun jsonToKotlin(e: JsonElement): Any? = when (e) {
        is JsonObject -> when {
            e.size == 1 && e.containsKey("\$numberLong") -> e["\$numberLong"]!!.jsonPrimitive.content.toLong()
            e.size == 1 && e.containsKey("\$numberInt") -> e["\$numberInt"]!!.jsonPrimitive.content.toInt()
            e.size == 1 && e.containsKey("\$numberDouble") -> e["\$numberDouble"]!!.jsonPrimitive.content.toDouble()
            else -> e.mapValues { jsonToKotlin(it.value) }
        }
        is JsonArray -> e.map { jsonToKotlin(it) }
        JsonNull -> null
        is JsonPrimitive -> when {
            e.isString -> e.content
            e.booleanOrNull != null -> e.booleanOrNull
            e.longOrNull != null -> e.longOrNull!!.let { if (it in Int.MIN_VALUE..Int.MAX_VALUE) it.toInt() else it }
            else -> e.doubleOrNull
        }
    }
}
