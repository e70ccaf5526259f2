package dev.mooring.spec.unified

import io.kotest.assertions.withClue
import io.kotest.matchers.shouldBe
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The unified format's tracing: an OpenTelemetry SDK with an in-memory exporter as
 * `GlobalOpenTelemetry` (while a spec has it installed) and `expectTracingMessages` matched
 * against the spans it exported. Spans are matched as trees: the expected `spans` against the
 * root spans (no exported parent) in start order, `nested` against each span's children, names
 * exactly, attributes with the unified matching rules; `ignoreExtraSpans` allows unexpected spans
 * in between. Not thread-safe (one spec at a time).
 */
object UnifiedTracing {
    private val exporter = InMemorySpanExporter.create()

    /** Installs the SDK as `GlobalOpenTelemetry`. */
    fun install() {
        GlobalOpenTelemetry.resetForTest()
        GlobalOpenTelemetry.set(
            OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build(),
        )
    }

    /** Removes it again. */
    fun uninstall() {
        GlobalOpenTelemetry.resetForTest()
        exporter.reset()
    }

    /** Forgets the spans of earlier tests. */
    fun reset() = exporter.reset()

    /** Checks one `expectTracingMessages` entry against the spans exported so far. */
    fun expect(e: JsonObject) {
        // The runner's failPoint operation goes through the test's client: like its command events
        // (unified-test-format.md ignores configureFailPoint), its spans are not the test's.
        val exported = exporter.finishedSpanItems
        val failPoint = exported.filter { it.name == "configureFailPoint" }.map { it.parentSpanId }.toSet()
        val all = exported.filter { it.name != "configureFailPoint" && it.spanId !in failPoint }
        val ids = all.map { it.spanId }.toSet()
        val ignoreExtra = (e["ignoreExtraSpans"] as? JsonPrimitive)?.booleanOrNull ?: false
        withClue("spans: " + all.joinToString("\n") { "${it.name} ${it.spanId} <- ${it.parentSpanId} ${it.attributes}" }) {
            match(e["spans"]!!.jsonArray.map { it.jsonObject }, all.filter { it.parentSpanId !in ids }.sortedBy { it.startEpochNanos }, all, ignoreExtra)
        }
    }

    private fun match(expected: List<JsonObject>, actual: List<SpanData>, all: List<SpanData>, ignoreExtra: Boolean) {
        if (!ignoreExtra) actual.map { it.name } shouldBe expected.map { it["name"]!!.jsonPrimitive.content }
        var next = 0
        for (want in expected) {
            val name = want["name"]!!.jsonPrimitive.content
            val attributes = want["attributes"]?.let { BsonDocument.parse(it.toString()) } ?: BsonDocument()
            val at = (next until actual.size).firstOrNull { i ->
                actual[i].name == name && ValueMatching.matches(attributes, document(actual[i].attributes))
            }
            withClue("expected span $name with $attributes among ${actual.drop(next).map { "${it.name} ${document(it.attributes)}" }}") {
                (at != null) shouldBe true
            }
            val span = actual[at!!]
            val children = all.filter { it.parentSpanId == span.spanId }.sortedBy { it.startEpochNanos }
            match(want["nested"]?.jsonArray?.map { it.jsonObject } ?: emptyList(), children, all, ignoreExtra)
            next = at + 1
        }
    }

    private fun document(attributes: Attributes): BsonDocument = BsonDocument().also { d ->
        attributes.forEach { key, value ->
            d[key.key] = when (value) {
                is String -> BsonString(value)
                is Long -> BsonInt64(value)
                is Boolean -> BsonBoolean(value)
                is Double -> BsonDouble(value)
                else -> BsonString(value.toString())
            }
        }
    }
}
