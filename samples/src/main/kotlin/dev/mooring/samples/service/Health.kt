package dev.mooring.samples.service

import dev.mooring.sdam.MongoCluster
import kotlinx.serialization.Serializable

/**
 * The body of `GET /health`: the cluster's state as the driver sees it. [status] is `up` when a
 * data-bearing server is known (the reply is then 200), `down` otherwise (503). Immutable.
 */
@Serializable
data class Health(
    val status: String,
    /** The topology type by its SDAM spec name (`Single`, `ReplicaSetWithPrimary`, ...). */
    val topologyType: String,
    val servers: List<ServerHealth>,
    val pools: List<PoolHealth>,
    val commands: CommandCounts,
) {
    /** True when [status] is `up`. */
    val isUp: Boolean get() = status == UP

    companion object {
        private const val UP = "up"

        /** A snapshot of [cluster]'s topology and pools (non-blocking reads) with [counters]' counts. */
        fun of(cluster: MongoCluster, counters: CommandCounters): Health {
            val topology = cluster.topology.value
            val servers = topology.servers.values.map { ServerHealth(it.address.toString(), it.type.specName, it.roundTripTimeMillis, it.error) }
            val pools = cluster.poolStatistics().map { (address, s) ->
                PoolHealth(address.toString(), s.state.name.lowercase(), s.totalConnections, s.availableConnections, s.inUseConnections, s.pendingConnections, s.waitQueueSize, s.generation)
            }
            val up = topology.servers.values.any { it.type.isDataBearing }
            return Health(if (up) UP else "down", topology.type.specName, servers, pools, CommandCounts(counters.succeeded, counters.failed))
        }
    }
}

/** One server of [Health.servers]: its address, SDAM server type, round-trip time and last error. Immutable. */
@Serializable
data class ServerHealth(val address: String, val type: String, val roundTripTimeMillis: Double?, val error: String?)

/** One connection pool of [Health.pools], from `MongoCluster.poolStatistics()`. Immutable. */
@Serializable
data class PoolHealth(
    val address: String,
    val state: String,
    val totalConnections: Int,
    val availableConnections: Int,
    val inUseConnections: Int,
    val pendingConnections: Int,
    val waitQueueSize: Int,
    val generation: Int,
)

/** The command monitoring counts of [Health.commands] ([CommandCounters]). Immutable. */
@Serializable
data class CommandCounts(val succeeded: Long, val failed: Long)
