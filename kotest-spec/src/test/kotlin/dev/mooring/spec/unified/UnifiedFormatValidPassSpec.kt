package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import kotlin.time.Duration.Companion.seconds

/**
 * The unified runner proves itself on `unified-test-format/valid-pass` (see [unifiedSuite]):
 * every file passes, or is skipped with the reason it needs a feature Mooring lacks (client-side
 * encryption, GridFS, change streams, transactions; [KnownGaps], runOnRequirements).
 */
class UnifiedFormatValidPassSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds
    unifiedSuite("unified-test-format/valid-pass")
})
