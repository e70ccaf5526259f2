package dev.mooring.sdam.internal.tracing

import dev.mooring.sdam.TracingSettings

/** Tracing as resolved for one cluster from its [TracingSettings] and the environment (open-telemetry.md). Immutable. */
internal class TracingConfig(val queryTextMaxLength: Int) {
    companion object {
        private val ENABLED_VALUES = setOf("1", "true", "yes")

        /** The resolved tracing, or null when tracing is off. [env] reads an environment variable. */
        fun resolve(settings: TracingSettings, env: (String) -> String?): TracingConfig? {
            val enabled = settings.enabled ?: (env(TracingSettings.ENABLED_ENV)?.trim()?.lowercase() in ENABLED_VALUES)
            if (!enabled) return null
            val maxLength = settings.queryTextMaxLength
                ?: env(TracingSettings.QUERY_TEXT_MAX_LENGTH_ENV)?.trim()?.toIntOrNull()?.takeIf { it > 0 }
                ?: 0
            return TracingConfig(maxLength)
        }
    }
}
