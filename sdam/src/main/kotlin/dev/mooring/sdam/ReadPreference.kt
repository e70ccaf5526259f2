package dev.mooring.sdam

/** The five read preference modes of the server selection spec. */
public enum class ReadPreferenceMode(
    /** The spelling used in URIs and `$readPreference` (`primaryPreferred`, …). */
    public val value: String,
) {
    PRIMARY("primary"),
    PRIMARY_PREFERRED("primaryPreferred"),
    SECONDARY("secondary"),
    SECONDARY_PREFERRED("secondaryPreferred"),
    NEAREST("nearest"),
    ;

    public companion object {
        /** The mode spelled [value] (case-insensitive), or null. */
        @JvmStatic
        public fun fromValue(value: String): ReadPreferenceMode? = entries.firstOrNull { it.value.equals(value, ignoreCase = true) }
    }
}

/**
 * A read preference: mode, tag sets (tried in order; an empty tag set matches every server),
 * and maxStalenessSeconds (null = no maximum). Immutable.
 *
 * The primary mode takes neither tag sets nor maxStalenessSeconds; [init] rejects them with
 * [IllegalArgumentException], as the server selection spec requires.
 */
public data class ReadPreference(
    val mode: ReadPreferenceMode,
    val tagSets: List<Map<String, String>> = emptyList(),
    val maxStalenessSeconds: Long? = null,
    /** The deprecated hedge document's `enabled`, kept only to send it on; null when absent. */
    val hedgeEnabled: Boolean? = null,
) {
    init {
        if (mode == ReadPreferenceMode.PRIMARY) {
            require(tagSets.isEmpty() || tagSets.all { it.isEmpty() }) { "read preference mode primary cannot be combined with tags" }
            require(maxStalenessSeconds == null) { "read preference mode primary cannot be combined with maxStalenessSeconds" }
        }
        require(maxStalenessSeconds == null || maxStalenessSeconds == -1L || maxStalenessSeconds > 0) {
            "maxStalenessSeconds must be positive or -1, was $maxStalenessSeconds"
        }
    }

    public companion object {
        @JvmField public val PRIMARY: ReadPreference = ReadPreference(ReadPreferenceMode.PRIMARY)
        @JvmField public val PRIMARY_PREFERRED: ReadPreference = ReadPreference(ReadPreferenceMode.PRIMARY_PREFERRED)
        @JvmField public val SECONDARY: ReadPreference = ReadPreference(ReadPreferenceMode.SECONDARY)
        @JvmField public val SECONDARY_PREFERRED: ReadPreference = ReadPreference(ReadPreferenceMode.SECONDARY_PREFERRED)
        @JvmField public val NEAREST: ReadPreference = ReadPreference(ReadPreferenceMode.NEAREST)
    }
}
