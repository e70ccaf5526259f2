package dev.mooring.sdam

import dev.mooring.sdam.internal.EventPlan
import dev.mooring.sdam.internal.ReplicaSetRules
import dev.mooring.sdam.internal.TopologyBuilder

/**
 * The SDAM topology state machine as pure functions: each takes the current
 * [TopologyDescription] and returns a [TopologyUpdate] (new description, actions, events).
 * No I/O, no clock, no coroutines, no shared state: safe to call from any thread. The caller
 * (the live topology) must serialize calls for one topology, install the new description and
 * carry out the actions inside one critical section.
 */
internal object TopologyStateMachine {
    /**
     * The first step of a topology: from [TopologyDescription.EMPTY] to the initial description
     * for [settings] (seeds as Unknown servers; the initial type from directConnection,
     * replicaSet and loadBalanced). Events: TopologyOpening, TopologyDescriptionChanged,
     * ServerOpening per seed — and in load-balanced mode, per the load balancer spec, then the
     * server's change to LoadBalancer and a second TopologyDescriptionChanged. Actions: start
     * monitoring each seed (load-balanced mode: no monitor, mark the pool ready instead).
     */
    @JvmStatic
    public fun open(settings: TopologySettings): TopologyUpdate {
        val seeds = settings.distinctSeeds
        val initial = TopologyDescription(
            settings.initialType,
            seeds.associateWith { ServerDescription.unknown(it) },
            setName = settings.replicaSetName,
        )
        val plan = ArrayList<EventPlan>()
        plan += EventPlan.TopologyOpening
        plan += EventPlan.TopologyChanged(TopologyDescription.EMPTY, initial)
        seeds.forEach { plan += EventPlan.ServerOpening(it) }
        if (!settings.loadBalanced) {
            return TopologyUpdate(TopologyDescription.EMPTY, initial, seeds.map { TopologyAction.StartMonitoring(it) }, false, plan)
        }
        val lb = ServerDescription(address = seeds.single(), type = ServerType.LOAD_BALANCER)
        val final = initial.copy(servers = mapOf(lb.address to lb))
        plan += EventPlan.ServerChanged(initial.servers.getValue(lb.address), lb)
        plan += EventPlan.TopologyChanged(initial, final)
        return TopologyUpdate(TopologyDescription.EMPTY, final, listOf(TopologyAction.MarkPoolReady(lb.address)), false, plan)
    }

    /**
     * Applies one check outcome [server] (a description from a hello reply, or an Unknown one
     * after a failed check or an application error) to [current], by the SDAM rules: the
     * outcome is ignored when the server is no longer in the topology or its topologyVersion
     * is older than the current one; Single replaces the server (Unknown when the setName does
     * not match [TopologySettings.replicaSetName]); LoadBalanced ignores monitor outcomes;
     * the other types follow the TopologyType table. Actions, in order: MarkPoolReady for a
     * usable server (data-bearing, or any known type in Single), StopMonitoring for removed
     * servers, StartMonitoring for added ones, RequestImmediateCheck for an invalidated old primary.
     */
    @JvmStatic
    public fun onServerDescription(current: TopologyDescription, server: ServerDescription, settings: TopologySettings): TopologyUpdate {
        val old = current.servers[server.address] ?: return TopologyUpdate.ignored(current)
        if (TopologyVersion.compare(old.topologyVersion, server.topologyVersion) > 0) return TopologyUpdate.ignored(current)
        if (current.type == TopologyType.LOAD_BALANCED) return TopologyUpdate.ignored(current)

        val t = TopologyBuilder(current)
        if (current.type == TopologyType.SINGLE) {
            val name = settings.replicaSetName
            t.servers[server.address] = if (name != null && server.isAvailable && server.setName != name) {
                ServerDescription.unknown(
                    server.address,
                    "server ${server.address} reports setName ${server.setName} but the required replicaSet is $name",
                )
            } else {
                server
            }
        } else {
            t.servers[server.address] = server
            applyTable(t, server, settings)
        }
        return finish(current, t, server)
    }

    /**
     * The closing step: every server removed (StopMonitoring each), the type set to Unknown;
     * events ServerClosed per server, TopologyDescriptionChanged to the empty Unknown
     * description, TopologyClosed.
     */
    @JvmStatic
    public fun close(current: TopologyDescription): TopologyUpdate {
        val plan = ArrayList<EventPlan>()
        current.servers.keys.forEach { plan += EventPlan.ServerClosed(it) }
        if (current != TopologyDescription.EMPTY) plan += EventPlan.TopologyChanged(current, TopologyDescription.EMPTY)
        plan += EventPlan.TopologyClosed
        return TopologyUpdate(current, TopologyDescription.EMPTY, current.servers.keys.map { TopologyAction.StopMonitoring(it) }, false, plan)
    }

    private fun applyTable(t: TopologyBuilder, d: ServerDescription, settings: TopologySettings) {
        when (t.type) {
            TopologyType.UNKNOWN -> when (d.type) {
                ServerType.STANDALONE -> ReplicaSetRules.updateUnknownWithStandalone(t, d, settings.distinctSeeds.size)
                ServerType.MONGOS -> t.type = TopologyType.SHARDED
                ServerType.RS_PRIMARY -> ReplicaSetRules.updateRSFromPrimary(t, d)
                ServerType.RS_SECONDARY, ServerType.RS_ARBITER, ServerType.RS_OTHER -> {
                    t.type = TopologyType.REPLICA_SET_NO_PRIMARY
                    ReplicaSetRules.updateRSWithoutPrimary(t, d)
                }
                ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY, ServerType.RS_GHOST -> Unit
                ServerType.LOAD_BALANCER -> t.remove(d.address)
            }
            TopologyType.SHARDED -> when (d.type) {
                ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY, ServerType.MONGOS -> Unit
                else -> t.remove(d.address)
            }
            TopologyType.REPLICA_SET_NO_PRIMARY -> when (d.type) {
                ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY, ServerType.RS_GHOST -> Unit
                ServerType.STANDALONE, ServerType.MONGOS, ServerType.LOAD_BALANCER -> t.remove(d.address)
                ServerType.RS_PRIMARY -> ReplicaSetRules.updateRSFromPrimary(t, d)
                ServerType.RS_SECONDARY, ServerType.RS_ARBITER, ServerType.RS_OTHER -> ReplicaSetRules.updateRSWithoutPrimary(t, d)
            }
            TopologyType.REPLICA_SET_WITH_PRIMARY -> when (d.type) {
                ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY, ServerType.RS_GHOST -> t.checkIfHasPrimary()
                ServerType.STANDALONE, ServerType.MONGOS, ServerType.LOAD_BALANCER -> {
                    t.remove(d.address)
                    t.checkIfHasPrimary()
                }
                ServerType.RS_PRIMARY -> ReplicaSetRules.updateRSFromPrimary(t, d)
                ServerType.RS_SECONDARY, ServerType.RS_ARBITER, ServerType.RS_OTHER -> ReplicaSetRules.updateRSWithPrimaryFromMember(t, d)
            }
            TopologyType.SINGLE, TopologyType.LOAD_BALANCED -> error("handled by the caller")
        }
    }

    /** Builds the update: the new description, the actions in their required order, and the event plan. */
    internal fun finish(
        current: TopologyDescription,
        t: TopologyBuilder,
        processed: ServerDescription,
        extra: List<TopologyAction> = emptyList(),
    ): TopologyUpdate {
        val next = t.build()
        val checked = processed.address
        val actions = ArrayList<TopologyAction>()
        next.servers[checked]?.let { d ->
            if (d.type.isDataBearing || (d.isAvailable && next.type == TopologyType.SINGLE)) actions += TopologyAction.MarkPoolReady(checked)
        }
        for (a in current.servers.keys) if (a !in next.servers) actions += TopologyAction.StopMonitoring(a)
        for (a in next.servers.keys) if (a !in current.servers) actions += TopologyAction.StartMonitoring(a)
        for (a in t.immediateChecks) if (a in next.servers) actions += TopologyAction.RequestImmediateCheck(a)
        actions += extra
        return TopologyUpdate(current, next, actions, false, EventPlan.diff(current, next, processed))
    }
}
