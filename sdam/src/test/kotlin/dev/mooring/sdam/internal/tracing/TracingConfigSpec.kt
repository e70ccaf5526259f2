package dev.mooring.sdam.internal.tracing

import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.TracingSettings
import dev.mooring.sdam.mongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf

class TracingConfigSpec : FunSpec({
    fun env(vararg pairs: Pair<String, String>): (String) -> String? = mapOf(*pairs)::get
    val on = TracingSettings.ENABLED_ENV
    val max = TracingSettings.QUERY_TEXT_MAX_LENGTH_ENV

    test("off by default; the environment variable turns it on with 1, true or yes (any case)") {
        TracingConfig.resolve(TracingSettings(), env()).shouldBeNull()
        for (yes in listOf("1", "true", "TRUE", "yes", " Yes ")) TracingConfig.resolve(TracingSettings(), env(on to yes)).shouldNotBeNull()
        for (no in listOf("0", "false", "no", "on", "")) TracingConfig.resolve(TracingSettings(), env(on to no)).shouldBeNull()
    }

    test("the cluster's setting overrides the environment both ways") {
        TracingConfig.resolve(TracingSettings(enabled = false), env(on to "true")).shouldBeNull()
        TracingConfig.resolve(TracingSettings(enabled = true), env(on to "false")).shouldNotBeNull()
    }

    test("db.query.text length: the setting, else the environment (a positive integer), else 0") {
        TracingConfig.resolve(TracingSettings(enabled = true), env())!!.queryTextMaxLength shouldBe 0
        TracingConfig.resolve(TracingSettings(enabled = true), env(max to "200"))!!.queryTextMaxLength shouldBe 200
        TracingConfig.resolve(TracingSettings(enabled = true), env(max to "-3"))!!.queryTextMaxLength shouldBe 0
        TracingConfig.resolve(TracingSettings(enabled = true), env(max to "x"))!!.queryTextMaxLength shouldBe 0
        TracingConfig.resolve(TracingSettings(enabled = true, queryTextMaxLength = 10), env(max to "200"))!!.queryTextMaxLength shouldBe 10
        shouldThrow<InvalidSettingsException> { TracingSettings(queryTextMaxLength = -1) }.message shouldBe "tracing.queryTextMaxLength must be 0 or more, got -1"
    }

    test("a tracer only when tracing is on; the DSL sets it") {
        Tracing.create(TracingSettings(), env()).shouldBeNull()
        Tracing.create(TracingSettings(), env(on to "yes")).shouldBeInstanceOf<OpenTelemetryTracer>()
        mongoClusterSettings { tracing { enabled = true; queryTextMaxLength = 50 } }.tracing shouldBe TracingSettings(true, 50)
    }
})
