package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `command-logging-and-monitoring/logging` suite (unified format): command log messages; see [unifiedSuite]. Tests needing a feature Mooring lacks are skipped with the reason.
 */
class CommandLoggingUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("command-logging-and-monitoring/logging")
})
