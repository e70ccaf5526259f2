package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `change-streams` suite (unified format) over the test kit, its change streams opened and
 * iterated through the driver's `watch` ([ChangeStreamOperations]); see [unifiedSuite]. Tests
 * needing a server feature the test kit lacks are skipped with the reason.
 */
class ChangeStreamsUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("change-streams")
})
