package dev.mooring.samples.demo

import java.util.concurrent.atomic.AtomicLongArray
import java.util.concurrent.atomic.AtomicLong

/**
 * A lock-free histogram of durations: 1 µs buckets up to 10 ms, 1 ms buckets up to 10 s, one
 * overflow bucket. [record] is cheap enough to call from an event listener (inside a pool's lock).
 */
class WaitHistogram {
    private val buckets = AtomicLongArray(FINE + COARSE + 1)
    private val total = AtomicLong()
    private val maxNanos = AtomicLong()

    /** Records one duration. Thread-safe. */
    fun record(nanos: Long) {
        val micros = (nanos / 1_000).coerceAtLeast(0)
        val index = when {
            micros < FINE -> micros.toInt()
            micros < FINE + COARSE * 1_000L -> FINE + ((micros - FINE) / 1_000).toInt()
            else -> FINE + COARSE
        }
        buckets.incrementAndGet(index)
        total.incrementAndGet()
        maxNanos.accumulateAndGet(nanos, ::maxOf)
    }

    /** How many durations were recorded. */
    val count: Long get() = total.get()

    /** The longest duration recorded, in milliseconds. */
    val maxMillis: Double get() = maxNanos.get() / 1e6

    /** The [p]th percentile (0 < p ≤ 100) in milliseconds (bucket upper bound); 0 when empty. */
    fun percentileMillis(p: Double): Double {
        require(p > 0 && p <= 100) { "percentile must be in (0, 100], got $p" }
        val n = total.get()
        if (n == 0L) return 0.0
        val rank = kotlin.math.ceil(n * p / 100).toLong().coerceAtLeast(1)
        var seen = 0L
        for (i in 0 until buckets.length()) {
            seen += buckets.get(i)
            if (seen >= rank) return upperBoundMillis(i)
        }
        return maxMillis
    }

    private fun upperBoundMillis(index: Int): Double = when {
        index < FINE -> (index + 1) / 1_000.0
        index < FINE + COARSE -> (FINE + (index - FINE + 1) * 1_000L) / 1_000.0
        else -> maxMillis
    }

    private companion object {
        const val FINE = 10_000 // µs
        const val COARSE = 9_990 // ms buckets after the first 10 ms
    }
}
