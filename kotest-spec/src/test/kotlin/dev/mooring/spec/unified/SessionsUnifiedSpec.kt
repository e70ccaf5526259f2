package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `sessions` suite (unified format: implicit and explicit sessions, dirty sessions) over the
 * test kit; see [unifiedSuite]. Snapshot sessions and transactions are skipped with the reason.
 */
class SessionsUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("sessions")
})
