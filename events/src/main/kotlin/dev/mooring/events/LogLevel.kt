package dev.mooring.events

/**
 * The log severity levels of logging.md (RFC 5424), from [OFF] (nothing) through the most
 * severe ([EMERGENCY]) to the least severe ([TRACE]). A threshold admits a message when the
 * message's level is at least as severe: [admits]. Immutable.
 */
public enum class LogLevel(
    /** The level's name in logging.md's environment variable values and in the unified test format. */
    public val specName: String,
) {
    /** Nothing is logged (as a threshold only). */
    OFF("off"),
    EMERGENCY("emergency"),
    ALERT("alert"),
    CRITICAL("critical"),
    ERROR("error"),
    WARNING("warn"),
    NOTICE("notice"),
    INFORMATIONAL("info"),
    DEBUG("debug"),
    TRACE("trace"),
    ;

    /** True when this level, used as a threshold, lets a message of [message]'s level through. */
    public fun admits(message: LogLevel): Boolean = this != OFF && message != OFF && message.ordinal <= ordinal

    public companion object {
        /**
         * The level named [name], case-insensitively; `warning` and `informational` are accepted
         * besides logging.md's `warn` and `info`. Throws [IllegalArgumentException] for any other name.
         */
        @JvmStatic
        public fun fromSpecName(name: String): LogLevel {
            val n = name.lowercase()
            return when (n) {
                "warning" -> WARNING
                "informational" -> INFORMATIONAL
                else -> entries.firstOrNull { it.specName == n }
                    ?: throw IllegalArgumentException("unknown log level '$name' (known: ${entries.joinToString { it.specName }})")
            }
        }
    }
}
