package dev.mooring.driver

/**
 * The value of an operation's `rawData` option (crud.md, bulk-write.md, index-management.md):
 * **for MongoDB's internal use** (see [MooringRawDataOption]); it may change or be removed in any
 * release without notice. Only [of], which needs the opt-in, creates one, so that an options
 * class's `rawData` can be set only by a caller that opted in. When set, the command carries
 * `rawData: value` — but only on a server of MongoDB 8.2 or newer (wire version 27), decided on
 * the connection each attempt goes over; an older server never gets the field. Immutable.
 */
public class RawData private constructor(
    /** The value sent as the command's `rawData`. */
    public val value: Boolean,
) {
    override fun equals(other: Any?): Boolean = other is RawData && other.value == value

    override fun hashCode(): Int = value.hashCode()

    override fun toString(): String = "RawData($value)"

    /** The factory, behind the opt-in. */
    public companion object {
        private val TRUE = RawData(true)
        private val FALSE = RawData(false)

        /** The `rawData` option with [value]; needs `@OptIn(MooringRawDataOption::class)`. */
        @MooringRawDataOption
        @JvmStatic
        public fun of(value: Boolean): RawData = if (value) TRUE else FALSE
    }
}
