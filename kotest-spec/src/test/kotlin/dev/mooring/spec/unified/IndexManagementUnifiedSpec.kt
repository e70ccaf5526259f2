package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `index-management` suite (unified format) over the test kit, its CRUD helpers run through the driver
 * API ([DriverCrud]); see [unifiedSuite]. Tests needing a feature Mooring or the test kit lacks are skipped with the reason.
 */
class IndexManagementUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("index-management")
})
