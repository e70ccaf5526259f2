package dev.mooring.bench.measure

/**
 * A log-linear latency histogram in nanoseconds with about 1.6% relative precision
 * (64 sub-buckets per power of two), allocation-free on [record]. Not thread-safe: each caller
 * owns one and the harness [merge]s them after the measured window.
 */
class LatencyHistogram {
    private val counts = LongArray(BUCKETS * SUB)
    var count: Long = 0
        private set
    var max: Long = 0
        private set

    fun record(nanos: Long) {
        val v = if (nanos < 0) 0 else nanos
        counts[index(v)]++
        count++
        if (v > max) max = v
    }

    fun merge(other: LatencyHistogram) {
        for (i in counts.indices) counts[i] += other.counts[i]
        count += other.count
        if (other.max > max) max = other.max
    }

    fun reset() {
        counts.fill(0)
        count = 0
        max = 0
    }

    /** The value at quantile [q] (0..1], reported as its bucket's upper bound (capped at [max]). */
    fun quantile(q: Double): Long {
        require(q > 0.0 && q <= 1.0) { "quantile must be in (0, 1], got $q" }
        if (count == 0L) return 0
        val rank = kotlin.math.ceil(q * count).toLong().coerceAtLeast(1)
        var seen = 0L
        for (i in counts.indices) {
            seen += counts[i]
            if (seen >= rank) return minOf(upperBound(i), max)
        }
        return max
    }

    companion object {
        private const val SUB_BITS = 6
        private const val SUB = 1 shl SUB_BITS
        private const val BUCKETS = 64 - SUB_BITS + 1

        internal fun index(v: Long): Int {
            if (v < SUB) return v.toInt()
            val msb = 63 - java.lang.Long.numberOfLeadingZeros(v)
            val shift = msb - SUB_BITS + 1
            val sub = (v ushr shift).toInt() - SUB / 2 // in [SUB/2, SUB)
            return shift * SUB + SUB / 2 + sub
        }

        internal fun upperBound(i: Int): Long {
            if (i < SUB) return i.toLong()
            val shift = i / SUB
            val sub = i % SUB
            val base = (sub.toLong()) shl shift
            return base + (1L shl shift) - 1
        }
    }
}
