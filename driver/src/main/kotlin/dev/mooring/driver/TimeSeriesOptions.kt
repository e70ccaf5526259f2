package dev.mooring.driver

/**
 * The `timeseries` option of [CreateCollectionOptions] (MongoDB 5.0+). Immutable; safe to share
 * between threads.
 *
 * As the server requires, [bucketMaxSpanSeconds] and [bucketRoundingSeconds] (MongoDB 6.3+) are
 * set together, to the same value, and not with [granularity] ([IllegalArgumentException] at
 * construction).
 */
public data class TimeSeriesOptions(
    /** The field holding each document's date (`timeField`). */
    val timeField: String,
    /** The field identifying a series (`metaField`). */
    val metaField: String? = null,
    /** How far apart a series' measurements usually are (`granularity`). */
    val granularity: TimeSeriesGranularity? = null,
    /** The maximum time span of one bucket, in seconds (`bucketMaxSpanSeconds`). */
    val bucketMaxSpanSeconds: Long? = null,
    /** The rounding of a new bucket's start time, in seconds (`bucketRoundingSeconds`). */
    val bucketRoundingSeconds: Long? = null,
) {
    init {
        require(timeField.isNotEmpty()) { "timeField must not be empty" }
        require(metaField == null || metaField.isNotEmpty()) { "metaField must not be empty" }
        require((bucketMaxSpanSeconds == null) == (bucketRoundingSeconds == null)) {
            "bucketMaxSpanSeconds and bucketRoundingSeconds are set together"
        }
        require(bucketMaxSpanSeconds == bucketRoundingSeconds) {
            "bucketMaxSpanSeconds ($bucketMaxSpanSeconds) and bucketRoundingSeconds ($bucketRoundingSeconds) must be equal"
        }
        require(bucketMaxSpanSeconds == null || bucketMaxSpanSeconds > 0) { "bucketMaxSpanSeconds must be positive, got $bucketMaxSpanSeconds" }
        require(granularity == null || bucketMaxSpanSeconds == null) { "granularity cannot be combined with bucketMaxSpanSeconds/bucketRoundingSeconds" }
    }
}

/** A time series collection's `granularity`. Immutable. */
public enum class TimeSeriesGranularity(
    /** The value sent. */
    public val value: String,
) {
    /** Measurements seconds apart (the server's default). */
    SECONDS("seconds"),

    /** Measurements minutes apart. */
    MINUTES("minutes"),

    /** Measurements hours apart. */
    HOURS("hours"),
}
