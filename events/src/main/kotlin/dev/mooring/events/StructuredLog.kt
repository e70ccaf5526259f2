package dev.mooring.events

import org.slf4j.Logger
import org.slf4j.LoggerFactory
import org.slf4j.event.Level

/**
 * The bridge from Mooring's spec-defined log messages to SLF4J and to a client's [LogSink].
 *
 * Each spec component (`command`, `topology`, `serverSelection`, `connection`; see
 * [LogComponent]) has its own SLF4J logger `dev.mooring.<component>`. A message is logged with
 * the spec's human-readable text and with every structured key-value pair attached through
 * SLF4J 2's fluent API, so JSON encoders (logstash, ECS) see them as fields; and, when
 * [settings] has a sink whose threshold for this component admits the level, handed to the
 * sink as a [LogMessage]. Key-value construction is skipped entirely when neither wants the
 * message ([isEnabled]). Thread-safe.
 *
 * Throws [IllegalArgumentException] for a [component] name that is not a [LogComponent].
 *
 * Not API ([InternalMooringApi]): cmap and sdam log through it; a client configures logging with
 * [LoggingSettings] and [LogSink].
 */
@InternalMooringApi
public class StructuredLog(
    component: String,
    /** The settings of the client this log belongs to. */
    public val settings: LoggingSettings = LoggingSettings.DEFAULT,
) {
    /** The spec component of this log. */
    public val component: LogComponent = LogComponent.fromSpecName(component)

    /** The SLF4J logger behind this component. */
    public val logger: Logger = LoggerFactory.getLogger("dev.mooring.$component")

    private val sinkLevel = settings.sinkLevel(this.component)

    /** True when DEBUG messages of this component would be written somewhere. */
    public val isDebugEnabled: Boolean get() = isEnabled(LogLevel.DEBUG)

    /** True when a message at [level] would go to SLF4J or to the sink. Cheap: no allocation. */
    public fun isEnabled(level: LogLevel): Boolean = sinkLevel.admits(level) || logger.isEnabledForLevel(slf4j(level))

    /** Logs [message] at DEBUG with the key-values [fields] builds (called only when enabled). */
    public inline fun debug(message: String, fields: MutableMap<String, Any?>.() -> Unit) {
        log(LogLevel.DEBUG, message, fields)
    }

    /** Logs [message] at INFORMATIONAL with the key-values [fields] builds (called only when enabled). */
    public inline fun info(message: String, fields: MutableMap<String, Any?>.() -> Unit) {
        log(LogLevel.INFORMATIONAL, message, fields)
    }

    /** Logs [message] at [level] with the key-values [fields] builds (called only when enabled). */
    public inline fun log(level: LogLevel, message: String, fields: MutableMap<String, Any?>.() -> Unit) {
        if (!isEnabled(level)) return
        val kv = LinkedHashMap<String, Any?>().apply(fields)
        emit(level, message, kv)
    }

    /** Writes one DEBUG record; see the other [emit]. */
    public fun emit(message: String, fields: Map<String, Any?>) {
        emit(LogLevel.DEBUG, message, fields)
    }

    /**
     * Writes one record at [level]: to SLF4J when its logger is enabled ([fields] become
     * key-value pairs and are appended to the text) and to the sink when its threshold admits
     * [level]. Null values are left out. A sink that throws is reported to SLF4J at WARN.
     */
    public fun emit(level: LogLevel, message: String, fields: Map<String, Any?>) {
        val slf4jLevel = slf4j(level)
        if (logger.isEnabledForLevel(slf4jLevel)) {
            var b = logger.atLevel(slf4jLevel)
            val text = StringBuilder(message)
            for ((k, v) in fields) {
                if (v == null) continue
                b = b.addKeyValue(k, v)
                text.append(' ').append(k).append('=').append(v)
            }
            b.log(text.toString())
        }
        val sink = settings.sink
        if (sink != null && sinkLevel.admits(level)) {
            val data = LinkedHashMap<String, Any>()
            for ((k, v) in fields) if (v != null) data[k] = v
            try {
                sink.log(LogMessage(component, level, message, data))
            } catch (e: Exception) {
                logger.warn("the log sink ${sink::class.java.name} threw on '$message'", e)
            }
        }
    }

    /** An extended JSON document cut to [LoggingSettings.maxDocumentLength] (logging.md). */
    public fun document(json: String): String = settings.truncate(json)

    private companion object {
        fun slf4j(level: LogLevel): Level = when (level) {
            LogLevel.TRACE -> Level.TRACE
            LogLevel.DEBUG -> Level.DEBUG
            LogLevel.INFORMATIONAL, LogLevel.NOTICE -> Level.INFO
            LogLevel.WARNING -> Level.WARN
            else -> Level.ERROR
        }
    }
}
