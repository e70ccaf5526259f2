package dev.mooring.sdam

/** What a server is being selected for: a read with a read preference, or a write. Immutable values. */
internal sealed interface ServerSelectionOperation {
    /** A read that follows [readPreference]. */
    public data class Read(
        /** The read preference to apply. */
        val readPreference: ReadPreference,
    ) : ServerSelectionOperation

    /** A write (or any operation that needs a writable server). */
    public data object Write : ServerSelectionOperation

    /** The mongos at [address] only (a sharded transaction's pinned mongos, transactions.md "Mongos Pinning"). */
    public data class Pinned(
        /** The pinned mongos. */
        val address: dev.mooring.events.ServerAddress,
    ) : ServerSelectionOperation
}
