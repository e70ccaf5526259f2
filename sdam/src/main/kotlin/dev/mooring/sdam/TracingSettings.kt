package dev.mooring.sdam

/**
 * OpenTelemetry tracing of a cluster's operations and commands (open-telemetry.md): an
 * operation span per `runCommand` / `runRetryableRead` / `runRetryableWrite` / `withConnection`
 * call, per cursor-opening command of `runCursorCommand` and per getMore and killCursors of its
 * cursor (named after the command: `find db.coll`, `getMore db.coll`; the cursor id on the span),
 * per `endSessions` when the cluster closes, and a command span per command sent (each retry its
 * own; none for security-sensitive commands), nested under the caller's span
 * (the coroutine context's OpenTelemetry context for Kotlin callers, `Context.current()` for
 * Java callers of `mooring-java`), with server selection and connection checkout recorded as
 * events of the operation span.
 *
 * Off by default. Spans go to `GlobalOpenTelemetry` (configure the SDK or the Java agent as
 * usual); `io.opentelemetry:opentelemetry-api` and `io.opentelemetry:opentelemetry-extension-kotlin`
 * are optional dependencies of Mooring that the application adds. When tracing is off nothing
 * is created per operation.
 *
 * Resolution: [enabled] when not null, else the environment variable [ENABLED_ENV]
 * (`1`, `true` or `yes`, case-insensitive); [queryTextMaxLength] when not null, else
 * [QUERY_TEXT_MAX_LENGTH_ENV], else 0. Explicitly enabling tracing without the OpenTelemetry API
 * on the classpath fails at construction with [InvalidSettingsException].
 *
 * Immutable and thread-safe.
 */
public data class TracingSettings(
    /** Trace this cluster (true), do not (false), or follow [ENABLED_ENV] (null, the default). */
    val enabled: Boolean? = null,
    /**
     * The most characters of the `db.query.text` attribute (the command as relaxed extended JSON,
     * without `lsid`, `$db`, `$clusterTime`); a longer command is cut there and gets a trailing
     * `...` (not counted), as logging.md truncates documents; 0 leaves the attribute out; null
     * follows [QUERY_TEXT_MAX_LENGTH_ENV] (default 0).
     */
    val queryTextMaxLength: Int? = null,
) {
    init {
        if (queryTextMaxLength != null && queryTextMaxLength < 0) {
            throw InvalidSettingsException("tracing.queryTextMaxLength must be 0 or more, got $queryTextMaxLength")
        }
    }

    public companion object {
        /** Enables tracing for every cluster that leaves [enabled] null (open-telemetry.md's `OTEL_#{LANG}_...`, LANG = KOTLIN for all of Mooring, Java facade included). */
        public const val ENABLED_ENV: String = "OTEL_KOTLIN_INSTRUMENTATION_MONGODB_ENABLED"

        /** The `db.query.text` length for every cluster that leaves [queryTextMaxLength] null. */
        public const val QUERY_TEXT_MAX_LENGTH_ENV: String = "OTEL_KOTLIN_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH"

        /** Tracing off (unless [ENABLED_ENV] says otherwise): the default. */
        @JvmField
        public val DEFAULT: TracingSettings = TracingSettings()
    }
}
