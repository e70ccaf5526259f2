package dev.mooring.samples.demo

import java.util.ArrayDeque

/**
 * Turns a growing total (starting at 0 when the meter is created) into a rate per second over a
 * sliding window (one second by default).
 * Thread-safe.
 */
class RateMeter(private val windowNanos: Long = 1_000_000_000L) {
    private val samples = ArrayDeque<Pair<Long, Long>>().apply { addLast(System.nanoTime() to 0L) }

    /** Adds a sample of [total] at [nowNanos] and returns the rate per second over the window. */
    @Synchronized
    fun sample(total: Long, nowNanos: Long = System.nanoTime()): Double {
        samples.addLast(nowNanos to total)
        while (samples.size > 2 && nowNanos - samples.first.first > windowNanos) samples.removeFirst()
        val (t0, n0) = samples.first
        val dt = nowNanos - t0
        return if (dt <= 0) 0.0 else (total - n0) * 1e9 / dt
    }
}
