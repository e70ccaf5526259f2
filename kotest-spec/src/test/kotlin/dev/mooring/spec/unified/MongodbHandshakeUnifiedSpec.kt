package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/** The `mongodb-handshake` suite (unified format) over the test kit; see [unifiedSuite]. */
class MongodbHandshakeUnifiedSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds
    unifiedSuite("mongodb-handshake")
})
