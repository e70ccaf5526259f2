package dev.mooring.sdam.internal.srv

import dev.mooring.events.ServerAddress
import dev.mooring.events.LoggingSettings
import dev.mooring.events.StructuredLog
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.topology.Topology
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlin.random.Random

/** What an SRV poller needs from the live topology. Implementations are thread-safe. */
internal interface SrvPollingTarget {
    /** The current topology description. */
    val current: TopologyDescription

    /** Applies one rescan's verified hosts in the topology's critical section (see [SrvRecordsUpdate]). */
    suspend fun onSrvRecords(hosts: List<ServerAddress>, srvMaxHosts: Int, random: Random)
}

/**
 * SRV polling for mongos discovery (polling-srv-records-for-mongos-discovery.md): a coroutine
 * that sleeps rescanSRVIntervalMS (measured from the end of the previous lookup), rescans the
 * SRV records and hands the verified hosts to the topology. Targets outside the SRV name's
 * domain are dropped and logged, never raised. A failed lookup, no records or no verified
 * record leave the topology unchanged and set the next interval to heartbeatFrequencyMS until
 * a rescan yields a verified record; otherwise the interval is the records' lowest TTL, at
 * least [minRescanIntervalMS] (60 s). It stops for good once the topology is neither Sharded
 * nor Unknown (such a topology never becomes Sharded again).
 *
 * Owned by the cluster: [start] launches it in the cluster's scope, so closing the cluster
 * cancels it; cancellation is prompt at every suspension point.
 */
internal class SrvPoller(
    private val srvHost: String,
    private val srvName: String,
    private val srvMaxHosts: Int,
    private val heartbeatFrequencyMS: Long,
    private val lookup: suspend (String) -> SrvAnswer,
    private val target: SrvPollingTarget,
    private val minRescanIntervalMS: Long = SrvSeedlistDiscovery.MIN_RESCAN_INTERVAL_MS,
    private val random: Random = Random.Default,
    logging: LoggingSettings = LoggingSettings.DEFAULT,
) {
    private val log = StructuredLog("topology", logging)

    /** Polls until cancelled or until the topology type rules polling out; the first rescan after [firstIntervalMS]. */
    suspend fun run(firstIntervalMS: Long) {
        var interval = firstIntervalMS
        while (true) {
            delay(interval)
            if (!pollable(target.current.type)) {
                log.debug("SRV polling stopped") { put("srvName", srvName); put("topologyType", target.current.type.specName) }
                return
            }
            interval = rescan()
        }
    }

    /** One rescan; returns the interval until the next one. */
    suspend fun rescan(): Long {
        val answer = try {
            lookup(srvName)
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            log.debug("SRV rescan failed; keeping the current hosts") { put("srvName", srvName); put("failure", e.toString()) }
            return heartbeatFrequencyMS
        }
        val (verified, rejected) = SrvSeedlistDiscovery.verified(srvHost, answer.targets)
        for (r in rejected) {
            log.debug("SRV record target ignored: it does not share the SRV name's domain") { put("srvName", srvName); put("host", r.host) }
        }
        if (verified.isEmpty()) {
            log.debug("SRV rescan found no verified hosts; keeping the current hosts") { put("srvName", srvName) }
            return heartbeatFrequencyMS
        }
        target.onSrvRecords(verified, srvMaxHosts, random)
        return maxOf(minRescanIntervalMS, (answer.minTtlSeconds ?: 0L) * 1000)
    }

    companion object {
        /** [topology] as a polling target. */
        fun targetOf(topology: Topology): SrvPollingTarget = object : SrvPollingTarget {
            override val current: TopologyDescription get() = topology.description.value
            override suspend fun onSrvRecords(hosts: List<ServerAddress>, srvMaxHosts: Int, random: Random) =
                topology.onSrvRecords(hosts, srvMaxHosts, random)
        }

        /** True when a cluster with [settings] polls SRV records: a `mongodb+srv` seed list, not load-balanced, not a direct connection. */
        fun shouldPoll(settings: MongoClusterSettings): Boolean =
            settings.srvHost != null && !settings.loadBalanced && !settings.directConnection

        /** True for the topology types that SRV polling serves. */
        fun pollable(type: TopologyType): Boolean = type == TopologyType.SHARDED || type == TopologyType.UNKNOWN

        /**
         * Starts polling for a cluster built from [resolution] when the spec asks for it (a
         * `mongodb+srv` seed list, not load-balanced); returns the poller's job or null.
         */
        fun start(resolution: SrvResolution, topology: Topology, scope: CoroutineScope): Job? {
            val target = targetOf(topology)
            val s: MongoClusterSettings = resolution.settings
            if (!shouldPoll(s)) return null
            val srvHost = s.srvHost!!
            val client = DnsClient(s.dnsResolver)
            val poller = SrvPoller(srvHost, SrvSeedlistDiscovery.srvName(s), s.srvMaxHosts, s.heartbeatFrequencyMS, client::srv, target, logging = s.logging)
            return scope.launch { poller.run(resolution.rescanIntervalMS) }
        }
    }
}
