package dev.mooring.sdam

import dev.mooring.events.ServerAddress

/**
 * The part of a client's configuration that decides the initial topology (SDAM "Initial
 * TopologyDescription"): the seed list, `directConnection`, `replicaSet` and `loadBalanced`.
 * Immutable. [init] applies the spec's validation and throws [InvalidTopologySettingsException]
 * for combinations the specs forbid.
 */
public data class TopologySettings(
    /** The seed list (at least one address; duplicates are removed keeping the first). */
    val seeds: List<ServerAddress>,
    /** The `directConnection` option; null when not given, which behaves as false. */
    val directConnection: Boolean? = null,
    /** The `replicaSet` option (the required set name), or null. */
    val replicaSetName: String? = null,
    /** The `loadBalanced` option. */
    val loadBalanced: Boolean = false,
) {
    init {
        if (seeds.isEmpty()) throw InvalidTopologySettingsException("the seed list is empty")
        if (directConnection == true && seeds.distinct().size > 1) {
            throw InvalidTopologySettingsException("directConnection=true cannot be used with multiple seeds (${seeds.joinToString(",")})")
        }
        if (loadBalanced) {
            if (seeds.distinct().size > 1) throw InvalidTopologySettingsException("loadBalanced=true cannot be used with multiple seeds")
            if (replicaSetName != null) throw InvalidTopologySettingsException("loadBalanced=true cannot be used with replicaSet")
            if (directConnection == true) throw InvalidTopologySettingsException("loadBalanced=true cannot be used with directConnection=true")
        }
        if (replicaSetName != null && replicaSetName.isEmpty()) throw InvalidTopologySettingsException("replicaSet must not be empty")
    }

    /** The seeds without duplicates, in the order given. */
    public val distinctSeeds: List<ServerAddress> get() = seeds.distinct()

    /** The initial TopologyType: LoadBalanced, Single (directConnection=true), ReplicaSetNoPrimary (replicaSet given) or Unknown. */
    public val initialType: TopologyType
        get() = when {
            loadBalanced -> TopologyType.LOAD_BALANCED
            directConnection == true -> TopologyType.SINGLE
            replicaSetName != null -> TopologyType.REPLICA_SET_NO_PRIMARY
            else -> TopologyType.UNKNOWN
        }
}

/**
 * A topology configuration that the specs forbid (for example directConnection=true with several
 * seeds): one of the [InvalidSettingsException]s. Immutable.
 */
public class InvalidTopologySettingsException(message: String) : InvalidSettingsException(message)
