package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `transactions-convenient-api (unified format: withTransaction's retry loop)` suite over the test kit; see [unifiedSuite]. Tests needing a feature Mooring or
 * the test kit lacks are skipped with the reason.
 */
class TransactionsConvenientApiUnifiedSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds
    unifiedSuite("transactions-convenient-api")
})
