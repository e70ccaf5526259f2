package dev.mooring.sdam.internal.srv

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.internal.implementation
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch

/**
 * Internal API for tests, not stable: drives SRV polling of a cluster faster than the spec's
 * 60-second floor allows, so the polling prose tests finish quickly. Thread-safe (stateless).
 */
internal object SrvPollingInternals {
    /**
     * Launches, in [scope] (the caller owns and cancels it), an extra SRV poller for [cluster]
     * with the same rules as the cluster's own one but a floor of [minRescanIntervalMS] on
     * the interval (after a successful rescan: max(floor, lowest TTL)); the first rescan runs
     * after [firstIntervalMS]. Throws [IllegalArgumentException] when [cluster] has no SRV name.
     */
    @JvmStatic
    internal fun launchPoller(cluster: MongoCluster, scope: CoroutineScope, minRescanIntervalMS: Long, firstIntervalMS: Long = minRescanIntervalMS): Job {
        val s = cluster.settings
        val srvHost = requireNotNull(s.srvHost) { "the cluster was not built from a mongodb+srv seed list" }
        val topology = cluster.implementation().liveTopology
        val poller = SrvPoller(
            srvHost, SrvSeedlistDiscovery.srvName(s), s.srvMaxHosts, s.heartbeatFrequencyMS,
            DnsClient(s.dnsResolver)::srv, SrvPoller.targetOf(topology), minRescanIntervalMS,
        )
        return scope.launch { poller.run(firstIntervalMS) }
    }
}
