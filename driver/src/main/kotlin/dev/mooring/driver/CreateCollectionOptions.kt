package dev.mooring.driver

import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of [MongoDatabase.createCollection] (the `create` command's); each one left null is
 * not sent and the server's default applies. Immutable; safe to share between threads. The
 * server validates the combinations (e.g. [size] is required with [capped]).
 */
public data class CreateCollectionOptions(
    /** A fixed-size collection (`capped`); needs [size]. */
    val capped: Boolean? = null,
    /** The capped collection's maximum size in bytes (`size`). */
    val size: Long? = null,
    /** The capped collection's maximum number of documents (`max`). */
    val max: Long? = null,
    /** The validation rules (`validator`), e.g. `{$jsonSchema: {...}}`. */
    val validator: Bson? = null,
    /** How strictly [validator] applies to existing documents (`validationLevel`). */
    val validationLevel: ValidationLevel? = null,
    /** What an invalid document causes (`validationAction`). */
    val validationAction: ValidationAction? = null,
    /** The collection's default collation. */
    val collation: Bson? = null,
    /** Makes it a time series collection (`timeseries`; MongoDB 5.0+). */
    val timeseries: TimeSeriesOptions? = null,
    /** Time series or clustered collection: documents expire this many seconds after their time (`expireAfterSeconds`). */
    val expireAfterSeconds: Long? = null,
    /** Makes it a clustered collection (`clusteredIndex`; MongoDB 5.3+). */
    val clusteredIndex: ClusteredIndexOptions? = null,
    /** Records pre- and post-images for change streams (`changeStreamPreAndPostImages: {enabled}`; MongoDB 6.0+). */
    val changeStreamPreAndPostImages: Boolean? = null,
    /** Storage engine options of the collection (`storageEngine`). */
    val storageEngine: Bson? = null,
    /** Default options of the collection's indexes (`indexOptionDefaults`). */
    val indexOptionDefaults: Bson? = null,
    /**
     * Queryable Encryption's `encryptedFields`: not supported by Mooring (client-side field level
     * encryption is out of its scope). A non-null value fails with [UnsupportedOperationException]
     * before anything is sent, rather than creating a collection whose data would not be encrypted.
     */
    val encryptedFields: Bson? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** Makes it a read-only view of the collection (or view) of this name in the same database (`viewOn`). */
    val viewOn: String? = null,
    /** The view's aggregation pipeline (`pipeline`); only with [viewOn]. */
    val pipeline: List<Bson>? = null,
) {
    init {
        require(size == null || size > 0) { "size must be positive, got $size" }
        require(max == null || max > 0) { "max must be positive, got $max" }
        require(expireAfterSeconds == null || expireAfterSeconds >= 0) { "expireAfterSeconds must not be negative, got $expireAfterSeconds" }
        require(viewOn == null || viewOn.isNotEmpty()) { "viewOn must not be empty" }
        require(pipeline == null || viewOn != null) { "a pipeline needs viewOn (it defines a view)" }
    }
}

/** A collection's `validationLevel`. Immutable. */
public enum class ValidationLevel(
    /** The value sent. */
    public val value: String,
) {
    /** No validation. */
    OFF("off"),

    /** Every insert and update is validated (the server's default). */
    STRICT("strict"),

    /** Inserts, and updates of documents that were valid, are validated. */
    MODERATE("moderate"),
}

/** A collection's `validationAction`. Immutable. */
public enum class ValidationAction(
    /** The value sent. */
    public val value: String,
) {
    /** An invalid document is rejected (the server's default). */
    ERROR("error"),

    /** An invalid document is written and a warning logged. */
    WARN("warn"),
}
