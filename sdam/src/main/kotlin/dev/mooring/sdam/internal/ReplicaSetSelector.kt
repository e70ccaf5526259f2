package dev.mooring.sdam.internal

import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType

/** Read preference rules for the replica set topologies: mode, then maxStalenessSeconds, then tag sets. Pure. */
internal object ReplicaSetSelector {
    /** Suitable servers among [candidates] (a subset of [topology]'s servers) for a read with [rp]. */
    fun read(topology: TopologyDescription, candidates: List<ServerDescription>, rp: ReadPreference, heartbeatFrequencyMS: Long): List<ServerDescription> {
        val primaries = candidates.filter { it.type == ServerType.RS_PRIMARY }
        return when (rp.mode) {
            ReadPreferenceMode.PRIMARY -> primaries
            ReadPreferenceMode.SECONDARY -> secondaries(topology, candidates, rp, heartbeatFrequencyMS)
            ReadPreferenceMode.NEAREST -> {
                val eligible = candidates.filter { it.type == ServerType.RS_PRIMARY || it.type == ServerType.RS_SECONDARY }
                byTags(byStaleness(topology, eligible, rp, heartbeatFrequencyMS), rp.tagSets)
            }
            ReadPreferenceMode.SECONDARY_PREFERRED -> secondaries(topology, candidates, rp, heartbeatFrequencyMS).ifEmpty { primaries }
            ReadPreferenceMode.PRIMARY_PREFERRED -> primaries.ifEmpty { secondaries(topology, candidates, rp, heartbeatFrequencyMS) }
        }
    }

    private fun secondaries(t: TopologyDescription, candidates: List<ServerDescription>, rp: ReadPreference, hb: Long): List<ServerDescription> =
        byTags(byStaleness(t, candidates.filter { it.type == ServerType.RS_SECONDARY }, rp, hb), rp.tagSets)

    private fun byStaleness(t: TopologyDescription, servers: List<ServerDescription>, rp: ReadPreference, hb: Long): List<ServerDescription> {
        val max = rp.maxStalenessSeconds ?: return servers
        if (max <= 0) return servers
        return servers.filter { stalenessMillis(t, it, hb) <= max * 1000 }
    }

    /**
     * The staleness of [s] in milliseconds (max-staleness spec): 0 for non-secondaries; with a
     * primary P: (S.lastUpdateTime - S.lastWriteDate) - (P.lastUpdateTime - P.lastWriteDate) +
     * heartbeatFrequencyMS; without: SMax.lastWriteDate - S.lastWriteDate + heartbeatFrequencyMS.
     */
    fun stalenessMillis(t: TopologyDescription, s: ServerDescription, hb: Long): Long {
        if (s.type != ServerType.RS_SECONDARY) return 0
        val primary = t.primary
        return if (t.type == TopologyType.REPLICA_SET_WITH_PRIMARY && primary != null) {
            (s.lastUpdate() - s.lastWrite()) - (primary.lastUpdate() - primary.lastWrite()) + hb
        } else {
            val sMax = t.servers.values.filter { it.type == ServerType.RS_SECONDARY }.maxOf { it.lastWrite() }
            sMax - s.lastWrite() + hb
        }
    }

    private fun ServerDescription.lastUpdate(): Long = lastUpdateTimeMillis ?: 0
    private fun ServerDescription.lastWrite(): Long = lastWriteDate ?: 0

    /** The servers matching the first tag set that matches any; all servers when there are no tag sets. */
    fun byTags(servers: List<ServerDescription>, tagSets: List<Map<String, String>>): List<ServerDescription> {
        if (tagSets.isEmpty()) return servers
        for (set in tagSets) {
            val matching = servers.filter { s -> set.all { (k, v) -> s.tags[k] == v } }
            if (matching.isNotEmpty()) return matching
        }
        return emptyList()
    }
}
