package dev.mooring.bench.mooring

import dev.mooring.bench.report.Scenario
import dev.mooring.bench.scenario.ElectionControl
import dev.mooring.bench.scenario.FailoverRun
import dev.mooring.bench.scenario.epochMicros
import dev.mooring.bench.worker.CellCommand
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/** Failover detection with Mooring: watches the topology StateFlow for the elected member. */
internal object MooringFailover {
    fun run(cmd: CellCommand): Map<String, Double> = ElectionControl(cmd.target).use { control ->
        val mode = if (cmd.scenario == Scenario.FAILOVER_STREAM) "stream" else "poll"
        val uri = control.seedUri() + "&serverMonitoringMode=$mode&heartbeatFrequencyMS=${FailoverSettings.HEARTBEAT_MS}"
        val cluster = MongoCluster(uri)
        try {
            FailoverRun.measure(control, cmd.count) { hostPort ->
                runBlocking {
                    withTimeout(30_000) {
                        cluster.topology.first { t -> t.primary?.address?.let { "${it.host}:${it.port}" } == hostPort }
                    }
                }
                epochMicros()
            }
        } finally {
            runBlocking { cluster.closeSuspending() }
        }
    }
}

/** Monitoring settings both libraries use in the failover scenarios. */
object FailoverSettings {
    /** heartbeatFrequencyMS: the smallest both libraries allow, so polling detection is not dominated by a 10 s default. */
    const val HEARTBEAT_MS: Int = 500
}
