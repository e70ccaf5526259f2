package dev.mooring.driver

/**
 * A read concern (read-write-concern.md): the `level` a read is sent with as
 * `readConcern: {level}`, or the server's default when [level] is null. Immutable; safe to share
 * between threads.
 *
 * The default of a [MongoDatabase] is the cluster settings' `readConcernLevel`; override it with
 * [MongoDatabase.withReadConcern] or [MongoCollection.withReadConcern].
 */
public data class ReadConcern(
    /** `local`, `available`, `majority`, `linearizable`, `snapshot`, or another level the server knows; null: the server's default. */
    val level: String? = null,
) {
    init {
        require(level == null || level.isNotEmpty()) { "a read concern level must not be empty" }
    }

    /** True when no level is given: nothing is sent, the server's default applies. */
    public val isServerDefault: Boolean get() = level == null

    public companion object {
        /** No level: the server's default. */
        @JvmField public val DEFAULT: ReadConcern = ReadConcern()

        /** `local`. */
        @JvmField public val LOCAL: ReadConcern = ReadConcern("local")

        /** `available`. */
        @JvmField public val AVAILABLE: ReadConcern = ReadConcern("available")

        /** `majority`. */
        @JvmField public val MAJORITY: ReadConcern = ReadConcern("majority")

        /** `linearizable`. */
        @JvmField public val LINEARIZABLE: ReadConcern = ReadConcern("linearizable")

        /** `snapshot`. */
        @JvmField public val SNAPSHOT: ReadConcern = ReadConcern("snapshot")
    }
}
