package dev.mooring.sdam

/** Builds [TracingSettings] inside `tracing { }` of the settings DSL. Not thread-safe. */
@MongoSettingsDsl
public class TracingSettingsBuilder internal constructor(from: TracingSettings) {
    /** See [TracingSettings.enabled]. */
    public var enabled: Boolean? = from.enabled

    /** See [TracingSettings.queryTextMaxLength]. */
    public var queryTextMaxLength: Int? = from.queryTextMaxLength

    internal fun build(): TracingSettings = TracingSettings(enabled, queryTextMaxLength)
}
