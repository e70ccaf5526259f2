package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/** The `cmap-logging` suite (unified format, `connection` log component) over the test kit; see [unifiedSuite]. */
class CmapLoggingUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("cmap-logging")
})
