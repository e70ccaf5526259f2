package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.internal.monitor.CheckOutcomeHandler
import dev.mooring.sdam.internal.monitor.MonitorSettings
import dev.mooring.sdam.internal.monitor.ServerMonitor
import kotlinx.coroutines.CoroutineScope

/**
 * Internal API, not stable: the production [MonitorFactory], one [ServerMonitor] per server
 * with its own monitoring connections from [connectionFactory], heartbeat events on [eventBus].
 * Thread-safe.
 */
internal class ServerMonitorFactory(
    settings: MongoClusterSettings,
    private val connectionFactory: DefaultConnectionFactory,
    private val eventBus: EventBus,
    private val topologyId: TopologyId? = null,
) : MonitorFactory {
    private val monitorSettings = MonitorSettings(
        heartbeatFrequencyMS = settings.heartbeatFrequencyMS, // >= MIN_HEARTBEAT_FREQUENCY_MS: the settings validated it
        connectTimeoutMS = settings.connection.connectTimeoutMS,
        mode = settings.serverMonitoringMode,
        logging = settings.logging,
    )

    override fun create(address: ServerAddress, scope: CoroutineScope, sink: CheckOutcomeSink): MonitorHandle {
        val handler = CheckOutcomeHandler { o -> sink.onCheckOutcome(o.description, o.error, o.clearPool, o.interruptInUseConnections) }
        val monitor = ServerMonitor(address, monitorSettings, connectionFactory, eventBus, scope, handler, topologyId)
        return object : MonitorHandle {
            override fun start() = monitor.start()
            override fun requestImmediateCheck() = monitor.requestImmediateCheck()
            override fun cancelCheck() = monitor.cancelCheck()
            override suspend fun close() = monitor.close()
        }
    }
}
