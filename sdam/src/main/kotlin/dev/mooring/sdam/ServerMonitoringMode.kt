package dev.mooring.sdam

/**
 * Which monitoring protocol server monitors use (server-monitoring.md, `serverMonitoringMode`).
 * An immutable enum, safe to share between threads.
 */
public enum class ServerMonitoringMode(
    /** The URI spelling: `auto`, `stream` or `poll`. */
    public val value: String,
) {
    /** Streaming when the server supports it, unless running on a FaaS platform. The default. */
    AUTO("auto"),

    /** Always use the streaming protocol when the server supports it. */
    STREAM("stream"),

    /** Always poll with `hello`. */
    POLL("poll"),
    ;

    public companion object {
        /** The mode spelled [value] (case-insensitive), or null. */
        @JvmStatic
        public fun fromValue(value: String): ServerMonitoringMode? = entries.firstOrNull { it.value.equals(value, ignoreCase = true) }
    }
}
