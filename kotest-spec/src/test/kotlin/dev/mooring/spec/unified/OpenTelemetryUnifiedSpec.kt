package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `open-telemetry` suite (unified format): clients with `observeTracingMessages` trace
 * (MongoClusterSettings.tracing) into the SDK's in-memory exporter installed as
 * `GlobalOpenTelemetry` for this spec, and `expectTracingMessages` is checked against the
 * exported spans ([UnifiedTracing]). Tests whose operations are CRUD helpers Mooring lacks are
 * skipped naming the helper ([KnownGaps]).
 */
class OpenTelemetryUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    beforeSpec { UnifiedTracing.install() }
    afterSpec { UnifiedTracing.uninstall() }
    unifiedSuite("open-telemetry")
})
