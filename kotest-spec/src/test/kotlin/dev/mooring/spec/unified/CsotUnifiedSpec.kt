package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `client-side-operations-timeout` suite (unified format): timeoutMS over selection, checkout, commands and retries; see [unifiedSuite]. Tests needing a feature Mooring lacks are skipped with the reason.
 */
class CsotUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("client-side-operations-timeout")
})
