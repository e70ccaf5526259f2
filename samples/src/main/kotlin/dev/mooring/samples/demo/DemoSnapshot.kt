package dev.mooring.samples.demo

import dev.mooring.cmap.ConnectionPoolStatistics
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription

/** One server's row in the views: its description and its pool's gauges (null: no pool). */
data class ServerRow(val description: ServerDescription, val pool: ConnectionPoolStatistics?)

/** Everything a view shows at one instant. */
data class DemoSnapshot(
    val elapsedSeconds: Double,
    val topology: TopologyDescription,
    val servers: List<ServerRow>,
    val opsPerSecond: Double,
    val operations: Long,
    val errors: Long,
    val p50Millis: Double,
    val p95Millis: Double,
    val p99Millis: Double,
    val maxWaitMillis: Double,
) {
    companion object {
        /** Reads the cluster's topology and pools and the stats now; [rate] turns the operation count into ops/s. */
        fun take(cluster: MongoCluster, stats: DemoStats, rate: RateMeter): DemoSnapshot {
            val topology = cluster.topology.value
            val pools: Map<ServerAddress, ConnectionPoolStatistics> = cluster.poolStatistics()
            val rows = topology.servers.values.sortedBy { it.address.toString() }.map { ServerRow(it, pools[it.address]) }
            val ops = stats.operations
            val w = stats.checkoutWaits
            return DemoSnapshot(
                stats.elapsedSeconds, topology, rows, rate.sample(ops), ops, stats.errors,
                w.percentileMillis(50.0), w.percentileMillis(95.0), w.percentileMillis(99.0), w.maxMillis,
            )
        }
    }
}

/** `0.42ms`, `12.3ms`, `1.20s`. */
internal fun formatMillis(ms: Double): String = when {
    ms < 1 -> "%.3fms".format(ms)
    ms < 100 -> "%.1fms".format(ms)
    ms < 1000 -> "%.0fms".format(ms)
    else -> "%.2fs".format(ms / 1000)
}
