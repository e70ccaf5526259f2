package dev.mooring.integration.auth

import dev.mooring.events.LogLevel
import dev.mooring.events.LogSink
import dev.mooring.events.LoggingSettings
import java.util.concurrent.CopyOnWriteArrayList

/** Captures every structured log message of one client, at every level, to check that no secret is ever logged. */
class LogProbe {
    private val lines = CopyOnWriteArrayList<String>()

    /** Logging settings that send every component's messages, at the most verbose level, here. */
    val settings: LoggingSettings = LoggingSettings(sink = LogSink { m -> lines += "${m.message} ${m.data}" }, defaultLevel = LogLevel.entries.last())

    /** Every message logged so far, with its data. */
    val text: String get() = lines.joinToString("\n")

    /** True when something was logged (a probe that saw nothing proves nothing). */
    val sawMessages: Boolean get() = lines.isNotEmpty()
}
