package dev.mooring.sdam

/**
 * The options of an explicit session ([MongoCluster.startSession], driver-sessions.md
 * "SessionOptions"). Immutable; safe to share between threads.
 *
 * [causalConsistency] null means true unless [snapshot] is set (causal-consistency.md: causally
 * consistent by default); both true is refused with [IllegalArgumentException].
 */
public data class ClientSessionOptions(
    /** Causal consistency (reads see the session's own earlier writes and reads); null: true unless [snapshot]. */
    val causalConsistency: Boolean? = null,
    /** Snapshot reads (driver-sessions.md "Snapshot reads"): every read sees the same point in time; no transactions. */
    val snapshot: Boolean = false,
    /** The options of this session's transactions, where [ClientSession.startTransaction]'s leave a field null. */
    val defaultTransactionOptions: TransactionOptions = TransactionOptions(),
    /**
     * The timeoutMS of this session's [ClientSession.commitTransaction], [ClientSession.abortTransaction],
     * [withTransaction] and [ClientSession.endSession] (client-side-operations-timeout.md "Sessions");
     * null: the cluster's timeoutMS. 0: no limit.
     */
    val defaultTimeoutMS: Long? = null,
) {
    init {
        require(defaultTimeoutMS == null || defaultTimeoutMS >= 0) { "defaultTimeoutMS must be >= 0 (0 = no limit), was $defaultTimeoutMS" }
        require(!(snapshot && causalConsistency == true)) { "a session cannot be both causally consistent and a snapshot session" }
    }

    /** Whether the session is causally consistent (the resolved [causalConsistency]). */
    public val isCausallyConsistent: Boolean get() = causalConsistency ?: !snapshot
}
