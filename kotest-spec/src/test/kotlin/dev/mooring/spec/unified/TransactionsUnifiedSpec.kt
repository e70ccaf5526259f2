package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `transactions (unified format: the transaction API, its command fields, error labels, retries and mongos pinning)` suite over the test kit; see [unifiedSuite]. Tests needing a feature Mooring or
 * the test kit lacks are skipped with the reason.
 */
class TransactionsUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("transactions")
})
