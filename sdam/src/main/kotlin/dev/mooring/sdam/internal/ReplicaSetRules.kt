package dev.mooring.sdam.internal

import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.WireVersions
import org.bson.types.ObjectId

/** The SDAM subroutines for replica sets and the Unknown topology (updateRSFromPrimary and friends). Pure. */
internal object ReplicaSetRules {
    const val STALE_PRIMARY_NEWER = "primary marked stale due to discovery of newer primary"
    const val STALE_PRIMARY_MISMATCH = "primary marked stale due to electionId/setVersion mismatch"

    fun updateUnknownWithStandalone(t: TopologyBuilder, d: ServerDescription, seedCount: Int) {
        if (d.address !in t) return
        if (seedCount == 1) t.type = TopologyType.SINGLE else t.remove(d.address)
    }

    fun updateRSWithoutPrimary(t: TopologyBuilder, d: ServerDescription) {
        if (d.address !in t) return
        if (t.setName == null) {
            t.setName = d.setName
        } else if (t.setName != d.setName) {
            t.remove(d.address)
            return
        }
        for (a in d.allMembers) t.addUnknownIfAbsent(a)
        t.markPossiblePrimary(d.primary)
        if (d.me != null && d.address != d.me) t.remove(d.address)
    }

    fun updateRSWithPrimaryFromMember(t: TopologyBuilder, d: ServerDescription) {
        if (d.address !in t) return
        if (t.setName != d.setName || (d.me != null && d.address != d.me)) {
            t.remove(d.address)
            t.checkIfHasPrimary()
            return
        }
        if (t.servers.values.none { it.type == ServerType.RS_PRIMARY }) {
            t.type = TopologyType.REPLICA_SET_NO_PRIMARY
            t.markPossiblePrimary(d.primary)
        }
    }

    fun updateRSFromPrimary(t: TopologyBuilder, d: ServerDescription) {
        if (d.address !in t) return
        if (t.setName == null) {
            t.setName = d.setName
        } else if (t.setName != d.setName) {
            t.remove(d.address)
            t.checkIfHasPrimary()
            return
        }
        if (!acceptPrimaryTuple(t, d)) {
            t.servers[d.address] = ServerDescription.unknown(
                d.address,
                "$STALE_PRIMARY_MISMATCH, ${tuple(d.electionId, d.setVersion)} is stale compared to ${tuple(t.maxElectionId, t.maxSetVersion)}",
            )
            t.checkIfHasPrimary()
            return
        }
        for ((a, s) in t.servers.entries.toList()) {
            if (a != d.address && s.type == ServerType.RS_PRIMARY) {
                t.servers[a] = ServerDescription.unknown(a, STALE_PRIMARY_NEWER)
                t.immediateChecks += a
            }
        }
        val members = d.allMembers
        for (a in members) t.addUnknownIfAbsent(a)
        for (a in t.servers.keys.toList()) if (a !in members) t.remove(a)
        t.checkIfHasPrimary()
    }

    /** Applies the electionId/setVersion rules; false when [d] is a stale primary. Updates the maxima when accepted. */
    private fun acceptPrimaryTuple(t: TopologyBuilder, d: ServerDescription): Boolean {
        if (d.maxWireVersion >= WireVersions.MONGODB_6_0) {
            val byElection = compareNullable(d.electionId, t.maxElectionId)
            val newer = byElection > 0 || (byElection == 0 && compareNullable(d.setVersion, t.maxSetVersion) >= 0)
            if (!newer) return false
            t.maxElectionId = d.electionId
            t.maxSetVersion = d.setVersion
            return true
        }
        val sv = d.setVersion
        val eid = d.electionId
        if (sv != null && eid != null) {
            val maxSv = t.maxSetVersion
            val maxEid = t.maxElectionId
            if (maxSv != null && maxEid != null && (maxSv > sv || (maxSv == sv && maxEid > eid))) return false
            t.maxElectionId = eid
        }
        if (sv != null && (t.maxSetVersion == null || sv > t.maxSetVersion!!)) t.maxSetVersion = sv
        return true
    }

    /** Orders nullable values with null below every value. */
    private fun <T : Comparable<T>> compareNullable(a: T?, b: T?): Int = when {
        a == null && b == null -> 0
        a == null -> -1
        b == null -> 1
        else -> a.compareTo(b)
    }

    private fun tuple(e: ObjectId?, v: Long?): String = "{electionId: ${e?.toHexString()}, setVersion: $v}"
}
