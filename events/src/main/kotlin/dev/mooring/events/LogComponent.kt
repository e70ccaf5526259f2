package dev.mooring.events

/**
 * The log components of logging.md. Each component has its own SLF4J logger
 * (`dev.mooring.<specName>`) and its own minimum level in [LoggingSettings]. Immutable.
 */
public enum class LogComponent(
    /** The component's name in the specs and in the unified test format (`serverSelection`, ...). */
    public val specName: String,
) {
    /** Command logging and monitoring. */
    COMMAND("command"),

    /** Server discovery and monitoring. */
    TOPOLOGY("topology"),

    /** Server selection. */
    SERVER_SELECTION("serverSelection"),

    /** Connection monitoring and pooling. */
    CONNECTION("connection"),
    ;

    public companion object {
        /** The component named [name] (its [specName]); throws [IllegalArgumentException] for any other name. */
        @JvmStatic
        public fun fromSpecName(name: String): LogComponent =
            entries.firstOrNull { it.specName == name }
                ?: throw IllegalArgumentException("unknown log component '$name' (known: ${entries.joinToString { it.specName }})")
    }
}
