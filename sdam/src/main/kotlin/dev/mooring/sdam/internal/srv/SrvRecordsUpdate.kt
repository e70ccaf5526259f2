package dev.mooring.sdam.internal.srv

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.TopologyAction
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.TopologyUpdate
import dev.mooring.sdam.internal.EventPlan
import dev.mooring.sdam.internal.TopologyBuilder
import kotlin.random.Random

/**
 * The pure topology step of one SRV rescan (polling-srv-records-for-mongos-discovery.md), in
 * the style of [dev.mooring.sdam.TopologyStateMachine]: servers no longer among the verified
 * [hosts] are removed, servers still there are left alone (same description, same monitor and
 * pool), new hosts are added as Unknown — all of them when `srvMaxHosts` is 0 or at least the
 * number of verified hosts, else randomly chosen (the seedlist's shuffle) until the topology has
 * `srvMaxHosts` servers. Only for Sharded and Unknown topologies: any other type, or an empty
 * [hosts] (a failed or empty lookup), leaves the topology unchanged (ignored). Stateless.
 */
internal object SrvRecordsUpdate {
    fun apply(current: TopologyDescription, hosts: List<ServerAddress>, srvMaxHosts: Int, random: Random): TopologyUpdate {
        if (current.type != TopologyType.SHARDED && current.type != TopologyType.UNKNOWN) return TopologyUpdate.ignored(current)
        val valid = hosts.distinct()
        if (valid.isEmpty()) return TopologyUpdate.ignored(current)
        val t = TopologyBuilder(current)
        val keep = valid.toSet()
        for (a in current.servers.keys) if (a !in keep) t.remove(a)
        val fresh = valid.filter { it !in current.servers }
        val toAdd = if (srvMaxHosts > 0 && srvMaxHosts < valid.size) {
            fresh.shuffled(random).take(maxOf(0, srvMaxHosts - t.servers.size))
        } else {
            fresh
        }
        toAdd.forEach { t.addUnknownIfAbsent(it) }
        val next = t.build()
        if (next == current) return TopologyUpdate.ignored(current)
        val actions = ArrayList<TopologyAction>()
        for (a in current.servers.keys) if (a !in next.servers) actions += TopologyAction.StopMonitoring(a)
        for (a in next.servers.keys) if (a !in current.servers) actions += TopologyAction.StartMonitoring(a)
        return TopologyUpdate(current, next, actions, false, EventPlan.diff(current, next, null))
    }
}
