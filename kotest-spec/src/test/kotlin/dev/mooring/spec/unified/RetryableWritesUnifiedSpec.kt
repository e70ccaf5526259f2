package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `retryable-writes` suite (unified format): CRUD helpers mapped to [dev.mooring.sdam.MongoCluster.runRetryableWrite]; see [unifiedSuite]. Tests needing a feature Mooring lacks are skipped with the reason.
 */
class RetryableWritesUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("retryable-writes")
})
