package dev.mooring.sdam.internal

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import org.bson.types.ObjectId

/** The mutable scratch copy of a [TopologyDescription] that one state machine step works on. Confined to that step. */
internal class TopologyBuilder(from: TopologyDescription) {
    var type: TopologyType = from.type
    var setName: String? = from.setName
    var maxElectionId: ObjectId? = from.maxElectionId
    var maxSetVersion: Long? = from.maxSetVersion
    val servers: LinkedHashMap<ServerAddress, ServerDescription> = LinkedHashMap(from.servers)

    /** Servers whose monitor must check them at once (invalidated old primaries). */
    val immediateChecks: LinkedHashSet<ServerAddress> = LinkedHashSet()

    operator fun contains(a: ServerAddress): Boolean = a in servers

    fun remove(a: ServerAddress) {
        servers.remove(a)
        immediateChecks.remove(a)
    }

    fun addUnknownIfAbsent(a: ServerAddress) {
        if (a !in servers) servers[a] = ServerDescription.unknown(a)
    }

    fun checkIfHasPrimary() {
        type = if (servers.values.any { it.type == ServerType.RS_PRIMARY }) TopologyType.REPLICA_SET_WITH_PRIMARY else TopologyType.REPLICA_SET_NO_PRIMARY
    }

    /** Marks the server [primary] points at PossiblePrimary when it is Unknown. */
    fun markPossiblePrimary(primary: ServerAddress?) {
        if (primary == null) return
        val d = servers[primary] ?: return
        if (d.type == ServerType.UNKNOWN) servers[primary] = d.copy(type = ServerType.POSSIBLE_PRIMARY)
    }

    fun build(): TopologyDescription = TopologyDescription(type, servers, setName, maxElectionId, maxSetVersion)
}
