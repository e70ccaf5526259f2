package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/** The `client-backpressure` suite (unified format) over the test kit; see [unifiedSuite]. */
class ClientBackpressureUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("client-backpressure")
})
