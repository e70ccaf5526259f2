package dev.mooring.cmap.internal.wire

import java.util.concurrent.atomic.AtomicInteger

/**
 * The process-wide request-id counter. Thread-safe and lock-free; ids are positive and
 * wrap from [Int.MAX_VALUE] back to 1.
 */
internal object RequestIds {
    private val counter = AtomicInteger(0)

    /** The next request id. */
    internal fun next(): Int = counter.updateAndGet { if (it == Int.MAX_VALUE) 1 else it + 1 }
}
