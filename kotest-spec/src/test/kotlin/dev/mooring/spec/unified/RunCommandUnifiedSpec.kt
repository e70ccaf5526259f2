package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `run-command` suite (unified format: `runCommand`, `runCursorCommand`, command cursors)
 * over the test kit; see [unifiedSuite]. Tests needing transactions are skipped with the reason.
 */
class RunCommandUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("run-command")
})
