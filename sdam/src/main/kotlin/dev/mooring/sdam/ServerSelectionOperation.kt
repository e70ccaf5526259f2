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
}
