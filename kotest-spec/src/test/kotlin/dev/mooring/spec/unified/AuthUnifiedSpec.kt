package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The `auth-unified` suite (unified format) over a test-kit server that requires MONGODB-OIDC
 * ([UnifiedHost.Oidc]: `ENVIRONMENT:test` with a token of the test kit's identity provider); see [unifiedSuite].
 */
class AuthUnifiedSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("auth-unified")
})
