package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import io.kotest.engine.concurrency.TestExecutionMode
import kotlin.time.Duration.Companion.seconds

/**
 * The `retryable-reads` suite (unified format): CRUD helpers mapped to [dev.mooring.sdam.MongoCluster.runRetryableRead]; see [unifiedSuite]. Tests needing a feature Mooring lacks are skipped with the reason.
 */
class RetryableReadsUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    // Each test runs on deployments of its own (ephemeral ports) and spends most of its time waiting
    // for the monitors (a server marked Unknown by a state change error is found again by the next
    // streaming hello reply, up to heartbeatFrequencyMS): run 8 at a time.
    testExecutionMode = TestExecutionMode.LimitedConcurrency(8)
    unifiedSuite("retryable-reads")
})
