package dev.mooring.sdam

/**
 * The average round-trip time of a server's checks: the first sample is the average, later
 * samples are folded in with an exponentially weighted moving average (alpha 0.2), as the
 * server selection spec requires. Immutable value: [add] returns a new instance; [reset]
 * gives the empty average a server gets when it becomes Unknown.
 */
internal class AverageRoundTripTime private constructor(
    /** The average in milliseconds, or null before the first sample. */
    public val averageMillis: Double?,
) {
    /** No samples yet. */
    public constructor() : this(null)

    /** The average after one more sample of [sampleMillis] milliseconds; throws IllegalArgumentException for a negative or non-finite sample. */
    public fun add(sampleMillis: Double): AverageRoundTripTime {
        require(sampleMillis >= 0.0 && sampleMillis.isFinite()) { "a round-trip time must be a non-negative number, was $sampleMillis" }
        val old = averageMillis ?: return AverageRoundTripTime(sampleMillis)
        return AverageRoundTripTime(ALPHA * sampleMillis + (1 - ALPHA) * old)
    }

    /** The empty average. */
    public fun reset(): AverageRoundTripTime = EMPTY

    override fun equals(other: Any?): Boolean = other is AverageRoundTripTime && other.averageMillis == averageMillis

    override fun hashCode(): Int = averageMillis.hashCode()

    override fun toString(): String = "AverageRoundTripTime($averageMillis)"

    public companion object {
        /** The weighting factor of the newest sample. */
        public const val ALPHA: Double = 0.2

        private val EMPTY = AverageRoundTripTime()
    }
}

/**
 * The minimum round-trip time over the last [WINDOW] samples (server monitoring spec); it
 * reports 0 until at least two samples were taken. Immutable value: [add] returns a new instance.
 */
internal class MinimumRoundTripTime private constructor(private val samples: List<Double>) {
    /** No samples yet. */
    public constructor() : this(emptyList())

    /** The minimum in milliseconds (0 with fewer than two samples). */
    public val minimumMillis: Double get() = if (samples.size < 2) 0.0 else samples.min()

    /** How many samples are held (at most [WINDOW]). */
    public val sampleCount: Int get() = samples.size

    /** The value after one more sample; throws IllegalArgumentException for a negative or non-finite sample. */
    public fun add(sampleMillis: Double): MinimumRoundTripTime {
        require(sampleMillis >= 0.0 && sampleMillis.isFinite()) { "a round-trip time must be a non-negative number, was $sampleMillis" }
        return MinimumRoundTripTime((samples + sampleMillis).takeLast(WINDOW))
    }

    /** The empty value. */
    public fun reset(): MinimumRoundTripTime = MinimumRoundTripTime()

    override fun equals(other: Any?): Boolean = other is MinimumRoundTripTime && other.samples == samples

    override fun hashCode(): Int = samples.hashCode()

    override fun toString(): String = "MinimumRoundTripTime($minimumMillis of $samples)"

    public companion object {
        /** How many recent samples count. */
        public const val WINDOW: Int = 10
    }
}
