package dev.mooring.sdam.internal.tracing

import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.TracingSettings
import org.slf4j.LoggerFactory

/** Creates a cluster's [OperationTracer], or none when tracing is off. Thread-safe. */
internal object Tracing {
    private val log = LoggerFactory.getLogger("dev.mooring.tracing")

    /** The OpenTelemetry API and its Kotlin extension are on the classpath. */
    val apiPresent: Boolean by lazy {
        listOf("io.opentelemetry.api.GlobalOpenTelemetry", "io.opentelemetry.extension.kotlin.ContextExtensionsKt").all { name ->
            try {
                Class.forName(name, false, Tracing::class.java.classLoader)
                true
            } catch (_: ClassNotFoundException) {
                false
            } catch (_: LinkageError) {
                false
            }
        }
    }

    /**
     * The tracer for [settings] (and [env]), or null when tracing is off. Throws
     * [InvalidSettingsException] when [TracingSettings.enabled] is true and the OpenTelemetry API
     * is missing; when only the environment variable asks for tracing, logs a warning instead.
     */
    fun create(settings: TracingSettings, env: (String) -> String? = System::getenv): OperationTracer? {
        val config = TracingConfig.resolve(settings, env) ?: return null
        if (!apiPresent) {
            val missing = "io.opentelemetry:opentelemetry-api and io.opentelemetry:opentelemetry-extension-kotlin are not on the classpath"
            if (settings.enabled == true) throw InvalidSettingsException("tracing.enabled is true but $missing")
            log.warn("{} asks for tracing but {}; tracing stays off", TracingSettings.ENABLED_ENV, missing)
            return null
        }
        return OpenTelemetryTracer(config)
    }
}
