package dev.mooring.bench.official

import com.mongodb.ConnectionString
import com.mongodb.MongoClientSettings
import com.mongodb.client.MongoClients
import com.mongodb.event.ClusterDescriptionChangedEvent
import com.mongodb.event.ClusterListener
import dev.mooring.bench.mooring.FailoverSettings
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.scenario.ElectionControl
import dev.mooring.bench.scenario.FailoverRun
import dev.mooring.bench.scenario.epochMicros
import dev.mooring.bench.worker.CellCommand

/** Failover detection with the official driver's SDAM (shared by its sync and reactive clients). */
internal object OfficialFailover {
    fun run(cmd: CellCommand): Map<String, Double> = ElectionControl(cmd.target).use { control ->
        val mode = if (cmd.scenario == Scenario.FAILOVER_STREAM) "stream" else "poll"
        val uri = control.seedUri() + "&serverMonitoringMode=$mode&heartbeatFrequencyMS=${FailoverSettings.HEARTBEAT_MS}"
        val lock = Object()
        var primary: String? = null
        val settings = MongoClientSettings.builder().applyConnectionString(ConnectionString(uri))
            .applyToClusterSettings {
                it.addClusterListener(object : ClusterListener {
                    override fun clusterDescriptionChanged(event: ClusterDescriptionChangedEvent) {
                        val p = event.newDescription.serverDescriptions.firstOrNull { d -> d.isPrimary }?.address
                        synchronized(lock) {
                            primary = p?.let { a -> "${a.host}:${a.port}" }
                            lock.notifyAll()
                        }
                    }
                })
            }.build()
        MongoClients.create(settings).use { _ ->
            FailoverRun.measure(control, cmd.count) { hostPort ->
                val deadline = System.nanoTime() + 30_000_000_000L
                synchronized(lock) {
                    while (primary != hostPort) {
                        val left = (deadline - System.nanoTime()) / 1_000_000
                        check(left > 0) { "the official driver never saw $hostPort as primary (saw $primary)" }
                        lock.wait(left)
                    }
                }
                epochMicros()
            }
        }
    }
}
