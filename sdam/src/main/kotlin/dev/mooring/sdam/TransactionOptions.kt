package dev.mooring.sdam

/**
 * The options of one transaction (transactions.md "TransactionOptions"): each null field is
 * inherited, first from the session's [ClientSessionOptions.defaultTransactionOptions], then
 * from the cluster's settings ([MongoClusterSettings.readConcernLevel],
 * [MongoClusterSettings.writeConcern], [MongoClusterSettings.readPreference]). Immutable; safe
 * to share between threads.
 */
public data class TransactionOptions(
    /** The read concern level the transaction's first command is sent with (`readConcern: {level}`); null: inherited. */
    val readConcernLevel: String? = null,
    /** The write concern of `commitTransaction` and `abortTransaction`; null: inherited. Unacknowledged (`w: 0`) is refused. */
    val writeConcern: WriteConcern? = null,
    /** Where the transaction's reads go; a transaction's reads must go to the primary. Null: inherited. */
    val readPreference: ReadPreference? = null,
    /** The `maxTimeMS` of `commitTransaction`; null: inherited (none by default). */
    val maxCommitTimeMS: Long? = null,
) {
    init {
        require(readConcernLevel == null || readConcernLevel.isNotEmpty()) { "a read concern level must not be empty" }
        require(maxCommitTimeMS == null || maxCommitTimeMS >= 0) { "maxCommitTimeMS must be >= 0, was $maxCommitTimeMS" }
    }

    /** These options, each null field taken from [defaults]. */
    public fun withDefaults(defaults: TransactionOptions): TransactionOptions = TransactionOptions(
        readConcernLevel ?: defaults.readConcernLevel,
        writeConcern ?: defaults.writeConcern,
        readPreference ?: defaults.readPreference,
        maxCommitTimeMS ?: defaults.maxCommitTimeMS,
    )
}
