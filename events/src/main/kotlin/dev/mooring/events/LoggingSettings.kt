package dev.mooring.events

/**
 * Where one client's structured log messages (logging.md) go, besides SLF4J.
 *
 * Mooring always writes its messages to the SLF4J loggers `dev.mooring.<component>` (their
 * levels are configured in the SLF4J backend). With a [sink], the messages of each component
 * whose threshold in [componentLevels] admits them are also handed to the sink as
 * [LogMessage]s — the programmatic, per-client interception logging.md requires. A component
 * without an entry uses [defaultLevel]. When neither SLF4J nor the sink wants a message, it is
 * not built at all.
 *
 * [maxDocumentLength] is logging.md's max document length: the extended JSON documents the specs
 * say to truncate (command logging's `command` and `reply`) longer than that many UTF-16 code
 * units are cut there (never inside a surrogate pair) and get a trailing `...`, for SLF4J and the
 * sink alike. A heartbeat's `reply` (SDAM logging) is logged whole, as parseable relaxed extended JSON.
 *
 * Immutable and thread-safe; throws [IllegalArgumentException] for a negative [maxDocumentLength].
 */
public class LoggingSettings @JvmOverloads constructor(
    /** The per-client receiver, or null for SLF4J only. */
    public val sink: LogSink? = null,
    /** The minimum level the sink receives, per component. */
    public val componentLevels: Map<LogComponent, LogLevel> = emptyMap(),
    /** The level for components missing from [componentLevels]. */
    public val defaultLevel: LogLevel = LogLevel.OFF,
    /** The longest extended JSON document logged before truncation. */
    public val maxDocumentLength: Int = DEFAULT_MAX_DOCUMENT_LENGTH,
) {
    init {
        require(maxDocumentLength >= 0) { "maxDocumentLength must not be negative, got $maxDocumentLength" }
    }

    /** The threshold of [component] for the sink ([LogLevel.OFF] without a sink). */
    public fun sinkLevel(component: LogComponent): LogLevel =
        if (sink == null) LogLevel.OFF else componentLevels[component] ?: defaultLevel

    /** [json] cut to [maxDocumentLength] with `...` appended when it is longer; unchanged otherwise. */
    public fun truncate(json: String): String {
        if (json.length <= maxDocumentLength) return json
        var end = maxDocumentLength
        if (end > 0 && Character.isHighSurrogate(json[end - 1])) end--
        return json.substring(0, end) + "..."
    }

    override fun toString(): String =
        "LoggingSettings(sink=${sink?.let { it::class.java.name }}, componentLevels=$componentLevels, " +
            "defaultLevel=$defaultLevel, maxDocumentLength=$maxDocumentLength)"

    public companion object {
        /** logging.md's default max document length. */
        public const val DEFAULT_MAX_DOCUMENT_LENGTH: Int = 1000

        /** SLF4J only, default truncation. */
        @JvmField
        public val DEFAULT: LoggingSettings = LoggingSettings()
    }
}
