package dev.mooring.sdam

/**
 * The type of one server as the client sees it (SDAM "ServerType"). Immutable enum, safe to
 * share between threads.
 */
public enum class ServerType(
    /** The spelling the specifications and their tests use (`RSPrimary`, `LoadBalancer`, …). */
    public val specName: String,
) {
    /** Not checked yet, or the last check failed. */
    UNKNOWN("Unknown"),

    /** A server that is not part of a replica set and not a mongos. */
    STANDALONE("Standalone"),

    /** A mongos router (`msg: "isdbgrid"`). */
    MONGOS("Mongos"),

    /** Not checked yet, but another member reports it as the primary. Synonymous with [UNKNOWN] for selection. */
    POSSIBLE_PRIMARY("PossiblePrimary"),

    /** The primary of a replica set. */
    RS_PRIMARY("RSPrimary"),

    /** A secondary of a replica set. */
    RS_SECONDARY("RSSecondary"),

    /** An arbiter of a replica set. */
    RS_ARBITER("RSArbiter"),

    /** A replica set member that is hidden, starting up or recovering. */
    RS_OTHER("RSOther"),

    /** A server that reports `isreplicaset: true`: uninitialized, starting, or removed from its set. */
    RS_GHOST("RSGhost"),

    /** A load balancer in front of mongos or mongod services (`loadBalanced=true`). */
    LOAD_BALANCER("LoadBalancer"),
    ;

    /** True for the types a client can read application data from (the spec's data-bearing server types). */
    public val isDataBearing: Boolean
        get() = this == MONGOS || this == RS_PRIMARY || this == RS_SECONDARY || this == STANDALONE || this == LOAD_BALANCER

    /** True for every type the client has heard from successfully ([UNKNOWN] and [POSSIBLE_PRIMARY] are not). */
    public val isKnown: Boolean get() = this != UNKNOWN && this != POSSIBLE_PRIMARY

    /** True for the replica set member types (primary, secondary, arbiter, other, ghost). */
    public val isReplicaSetMember: Boolean
        get() = this == RS_PRIMARY || this == RS_SECONDARY || this == RS_ARBITER || this == RS_OTHER || this == RS_GHOST

    public companion object {
        /** The type spelled [specName] (case-insensitive), or null. */
        @JvmStatic
        public fun fromSpecName(specName: String): ServerType? = entries.firstOrNull { it.specName.equals(specName, ignoreCase = true) }
    }
}
