package dev.mooring.sdam.internal.monitor

import dev.mooring.events.LoggingSettings
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerMonitoringMode

/**
 * The settings of one [ServerMonitor] (server-monitoring.md).
 *
 * Immutable; safe to share between monitors and threads.
 *
 * @throws IllegalArgumentException when [minHeartbeatFrequencyMS] is not positive or
 *   [heartbeatFrequencyMS] is below it ([connectTimeoutMS] comes from settings that
 *   ConnectionSettingsRules validated).
 */
internal class MonitorSettings(
    /** Interval between checks, from the end of one to the start of the next (validated by the cluster settings). */
    internal val heartbeatFrequencyMS: Long,
    /**
     * The least time between the end of one check and the start of the next one that a
     * [ServerMonitor.requestImmediateCheck] may cause. The spec fixes it at 500 ms (no user
     * knob); only tests lower it.
     */
    internal val minHeartbeatFrequencyMS: Long = MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS,
    /**
     * connectTimeoutMS: bounds the monitoring connection's handshake and, as its socket timeout,
     * every polling hello; a streaming hello waits up to connectTimeoutMS + heartbeatFrequencyMS.
     * 0 means no limit (also for streaming replies).
     */
    internal val connectTimeoutMS: Long,
    /** Streaming or polling; [ServerMonitoringMode.AUTO] polls when a FaaS platform is detected. */
    internal val mode: ServerMonitoringMode,
    /** Where the heartbeat log messages go besides SLF4J. */
    internal val logging: LoggingSettings = LoggingSettings.DEFAULT,
) {
    init {
        require(minHeartbeatFrequencyMS > 0) { "minHeartbeatFrequencyMS must be > 0, was $minHeartbeatFrequencyMS" }
        require(heartbeatFrequencyMS >= minHeartbeatFrequencyMS) {
            "heartbeatFrequencyMS must be >= minHeartbeatFrequencyMS ($minHeartbeatFrequencyMS), was $heartbeatFrequencyMS"
        }
    }

    /** The read timeout of an awaitable (streaming) hello: connectTimeoutMS + heartbeatFrequencyMS, or 0 (none) when connectTimeoutMS is 0. */
    internal val streamingReadTimeoutMS: Long get() = if (connectTimeoutMS == 0L) 0L else connectTimeoutMS + heartbeatFrequencyMS

    override fun toString(): String =
        "MonitorSettings(heartbeatFrequencyMS=$heartbeatFrequencyMS, minHeartbeatFrequencyMS=$minHeartbeatFrequencyMS, " +
            "connectTimeoutMS=$connectTimeoutMS, mode=$mode)"
}
