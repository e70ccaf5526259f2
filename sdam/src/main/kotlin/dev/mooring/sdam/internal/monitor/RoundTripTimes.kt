package dev.mooring.sdam.internal.monitor

import dev.mooring.sdam.AverageRoundTripTime
import dev.mooring.sdam.MinimumRoundTripTime

/**
 * One server's RTT samples, shared by the monitor coroutine (handshake and polling samples,
 * [reset] on a failed check) and the RTT coroutine (streaming mode). Thread-safe: every access
 * holds this object's monitor briefly; nothing suspends under it.
 */
internal class RoundTripTimes {
    private var average = AverageRoundTripTime()
    private var minimum = MinimumRoundTripTime()

    /** The EWMA average in milliseconds, or null before the first sample. */
    val averageMillis: Double? get() = synchronized(this) { average.averageMillis }

    /** The minimum over the last 10 samples in milliseconds (0 with fewer than two). */
    val minimumMillis: Double get() = synchronized(this) { minimum.minimumMillis }

    /** How many samples the minimum window holds. */
    val sampleCount: Int get() = synchronized(this) { minimum.sampleCount }

    /** Adds a sample measured over [nanos] nanoseconds. */
    fun addNanos(nanos: Long) {
        val ms = nanos.coerceAtLeast(0) / 1_000_000.0
        synchronized(this) {
            average = average.add(ms)
            minimum = minimum.add(ms)
        }
    }

    /** Forgets every sample (the server's check failed). */
    fun reset() {
        synchronized(this) {
            average = average.reset()
            minimum = minimum.reset()
        }
    }
}
