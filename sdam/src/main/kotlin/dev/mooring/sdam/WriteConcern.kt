package dev.mooring.sdam

/**
 * The `w` field of a write concern: a number of nodes or a tag/mode name such as
 * `majority`. Immutable values, safe to share between threads.
 */
public sealed interface WriteAcknowledgement {
    /** `w: <count>`; 0 means unacknowledged. */
    public data class Nodes(public val count: Int) : WriteAcknowledgement {
        init {
            if (count < 0) throw InvalidSettingsException("w must be a non-negative integer, was $count")
        }

        override fun toString(): String = count.toString()
    }

    /** `w: "<name>"`, for example `majority` or a custom tag set name. */
    public data class Tag(public val name: String) : WriteAcknowledgement {
        init {
            if (name.isEmpty()) throw InvalidSettingsException("w must not be an empty string")
        }

        override fun toString(): String = name
    }

    public companion object {
        /** `w: "majority"`. */
        @JvmField
        public val MAJORITY: WriteAcknowledgement = Tag("majority")
    }
}

/**
 * The client's default write concern (URI options `w`, `wTimeoutMS`, `journal`). Every field
 * is optional: null means "not specified, use the server's default". Immutable and safe to
 * share between threads.
 *
 * `w: 0` combined with `journal: true` is rejected, as the read/write concern spec requires.
 */
public data class WriteConcern(
    /** The `w` field, or null when not specified. */
    val w: WriteAcknowledgement? = null,
    /** The `wtimeout` field in milliseconds (0 = no timeout), or null when not specified. */
    val wTimeoutMS: Long? = null,
    /** The `j` field, or null when not specified. */
    val journal: Boolean? = null,
) {
    init {
        if (wTimeoutMS != null && wTimeoutMS < 0) throw InvalidSettingsException("wTimeoutMS must be >= 0, was $wTimeoutMS")
        if (journal == true && w == WriteAcknowledgement.Nodes(0)) {
            throw InvalidSettingsException("w=0 cannot be combined with journal=true")
        }
    }

    /** True when no field is specified (the server default applies). */
    public val isServerDefault: Boolean get() = w == null && wTimeoutMS == null && journal == null

    public companion object {
        /** No field specified: the server's default write concern. */
        @JvmField
        public val DEFAULT: WriteConcern = WriteConcern()
    }
}
