package dev.mooring.events

import org.slf4j.Logger
import org.slf4j.LoggerFactory

/**
 * The bridge from Mooring's spec-defined log messages to SLF4J.
 *
 * Each spec component (`command`, `topology`, `serverSelection`, `connection`) has its own
 * logger named `org.mongodb.driver.<component>`-style as `dev.mooring.<component>`. A message
 * is logged with the spec's human-readable text and with every structured key-value pair
 * attached through SLF4J 2's fluent API, so JSON encoders (logstash, ECS) see them as fields.
 * Key-value construction is skipped entirely when the level is disabled. Thread-safe.
 */
public class StructuredLog(component: String) {
    /** The SLF4J logger behind this component. */
    public val logger: Logger = LoggerFactory.getLogger("dev.mooring.$component")

    /** True when DEBUG messages of this component would be written. */
    public val isDebugEnabled: Boolean get() = logger.isDebugEnabled

    /** Logs [message] at DEBUG with the key-values [fields] builds (called only when enabled). */
    public inline fun debug(message: String, fields: MutableMap<String, Any?>.() -> Unit) {
        if (!logger.isDebugEnabled) return
        val kv = LinkedHashMap<String, Any?>().apply(fields)
        emit(message, kv)
    }

    /** Writes one DEBUG record; [fields] become SLF4J key-value pairs and are appended to the text. */
    public fun emit(message: String, fields: Map<String, Any?>) {
        var b = logger.atDebug()
        val text = StringBuilder(message)
        for ((k, v) in fields) {
            if (v == null) continue
            b = b.addKeyValue(k, v)
            text.append(' ').append(k).append('=').append(v)
        }
        b.log(text.toString())
    }
}
