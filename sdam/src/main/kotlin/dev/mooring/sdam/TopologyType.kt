package dev.mooring.sdam

/** The type of the whole deployment (SDAM "TopologyType"). Immutable enum, safe to share between threads. */
public enum class TopologyType(
    /** The spelling the specifications and their tests use (`ReplicaSetWithPrimary`, …). */
    public val specName: String,
) {
    /** A direct connection to one server; stays Single forever. */
    SINGLE("Single"),

    /** A replica set whose primary is not known. */
    REPLICA_SET_NO_PRIMARY("ReplicaSetNoPrimary"),

    /** A replica set with a known primary. */
    REPLICA_SET_WITH_PRIMARY("ReplicaSetWithPrimary"),

    /** One or more mongos routers. */
    SHARDED("Sharded"),

    /** A load balancer (`loadBalanced=true`); stays LoadBalanced forever. */
    LOAD_BALANCED("LoadBalanced"),

    /** Not discovered yet. */
    UNKNOWN("Unknown"),
    ;

    /** True for the two replica set types. */
    public val isReplicaSet: Boolean get() = this == REPLICA_SET_NO_PRIMARY || this == REPLICA_SET_WITH_PRIMARY

    public companion object {
        /** The type spelled [specName] (case-insensitive), or null. */
        @JvmStatic
        public fun fromSpecName(specName: String): TopologyType? = entries.firstOrNull { it.specName.equals(specName, ignoreCase = true) }
    }
}
