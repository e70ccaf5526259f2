package dev.mooring.sdam

import dev.mooring.cmap.ClientWireVersion

import dev.mooring.events.ServerAddress
import org.bson.types.ObjectId

/**
 * The client's view of the whole deployment. Immutable: every update produces a new
 * instance (by the SDAM state machine), so it is safe to share between threads and to
 * publish through a `StateFlow`.
 *
 * [compatible], [compatibilityError] and [logicalSessionTimeoutMinutes] are derived from
 * [servers] when the instance is built, by the spec's rules. Equality compares [type],
 * [setName], [maxElectionId], [maxSetVersion], [servers] (by server description equality) and
 * each server's round-trip time, so a `StateFlow` of descriptions re-publishes a new RTT sample;
 * TopologyDescriptionChanged events follow the spec and ignore round-trip times.
 */
public class TopologyDescription(
    /** The topology type. */
    public val type: TopologyType,
    /** One description per server, keyed by address, in discovery order. */
    servers: Map<ServerAddress, ServerDescription>,
    /** The replica set name, or null until known. */
    public val setName: String? = null,
    /** The largest electionId ever reported by a primary, or null. */
    public val maxElectionId: ObjectId? = null,
    /** The setVersion that goes with [maxElectionId] (the largest one seen by the pre-6.0 rules), or null. */
    public val maxSetVersion: Long? = null,
) {
    /** One description per server, keyed by address, in discovery order. Read-only. */
    public val servers: Map<ServerAddress, ServerDescription> = java.util.Collections.unmodifiableMap(LinkedHashMap(servers))

    /** [servers]' descriptions in discovery order, as a list (selection iterates it without an iterator object). */
    internal val serverList: List<ServerDescription> = ArrayList(this.servers.values)

    init {
        for ((a, d) in this.servers) require(a == d.address) { "server description for ${d.address} is stored under $a" }
    }

    /** The first available server whose wire versions do not overlap the client's, or null. */
    internal val incompatibleServer: ServerDescription? = if (type == TopologyType.LOAD_BALANCED) null else findIncompatibleServer()

    /** The compatibility error message, or null when every known server overlaps the client's wire version range. */
    public val compatibilityError: String? = incompatibleServer?.let { ClientWireVersion.compatibilityError(it.address, it.minWireVersion, it.maxWireVersion) }

    /** False when some known server's wire versions do not overlap the client's. */
    public val compatible: Boolean get() = compatibilityError == null

    /**
     * The smallest `logicalSessionTimeoutMinutes` among data-bearing servers; null when any
     * of them has none, or when there is no data-bearing server.
     */
    public val logicalSessionTimeoutMinutes: Int? = computeLogicalSessionTimeout()

    /** True when some server is of type RSPrimary. */
    public val hasPrimary: Boolean get() = servers.values.any { it.type == ServerType.RS_PRIMARY }

    /** The primary's description, or null. */
    public val primary: ServerDescription? get() = servers.values.firstOrNull { it.type == ServerType.RS_PRIMARY }

    /** True when [address] is one of [servers]. */
    public operator fun contains(address: ServerAddress): Boolean = address in servers

    /** Returns a copy with the given fields replaced. */
    public fun copy(
        type: TopologyType = this.type,
        servers: Map<ServerAddress, ServerDescription> = this.servers,
        setName: String? = this.setName,
        maxElectionId: ObjectId? = this.maxElectionId,
        maxSetVersion: Long? = this.maxSetVersion,
    ): TopologyDescription = TopologyDescription(type, servers, setName, maxElectionId, maxSetVersion)

    private fun findIncompatibleServer(): ServerDescription? =
        servers.values.firstOrNull { it.isAvailable && ClientWireVersion.compatibilityError(it.address, it.minWireVersion, it.maxWireVersion) != null }

    private fun computeLogicalSessionTimeout(): Int? {
        var min: Int? = null
        var any = false
        for (s in servers.values) {
            if (!s.isDataBearing) continue
            any = true
            val v = s.logicalSessionTimeoutMinutes ?: return null
            min = if (min == null) v else minOf(min, v)
        }
        return if (any) min else null
    }

    override fun equals(other: Any?): Boolean {
        if (this === other) return true
        if (other !is TopologyDescription) return false
        return isSpecEqual(other) && sameRoundTripTimes(other)
    }

    /** The spec's notion of "the topology description changed": [equals] without round-trip times. */
    internal fun isSpecEqual(other: TopologyDescription): Boolean =
        this === other || (type == other.type && setName == other.setName && maxElectionId == other.maxElectionId &&
            maxSetVersion == other.maxSetVersion && servers == other.servers)

    /** Whether every server has the same round-trip time in [other] (server description equality leaves RTT out). */
    private fun sameRoundTripTimes(other: TopologyDescription): Boolean =
        servers.all { (address, s) -> s.roundTripTimeMillis == other.servers[address]?.roundTripTimeMillis }

    override fun hashCode(): Int = ((type.hashCode() * 31 + (setName?.hashCode() ?: 0)) * 31) + servers.keys.hashCode()

    override fun toString(): String =
        "TopologyDescription(${type.specName}, setName=$setName, maxElectionId=$maxElectionId, maxSetVersion=$maxSetVersion, " +
            "servers=${servers.values}${if (compatibilityError != null) ", incompatible: $compatibilityError" else ""})"

    public companion object {
        /** The empty Unknown description (no servers) that precedes every topology's first description. */
        @JvmField
        public val EMPTY: TopologyDescription = TopologyDescription(TopologyType.UNKNOWN, emptyMap())
    }
}
