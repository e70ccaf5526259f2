package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `load-balancers` suite (unified format) over the test kit's [dev.mooring.testkit.sharded.LoadBalancerSimulator];
 * see [unifiedSuite]. Tests needing transactions or change streams are skipped with the reason.
 */
class LoadBalancersUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("load-balancers")
})
