package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.settings.TopologyRules

/**
 * The part of a client's configuration that decides the initial topology (SDAM "Initial
 * TopologyDescription"): the seed list, `directConnection`, `replicaSet` and `loadBalanced`.
 * Immutable. [init] applies the spec's validation and throws [InvalidTopologySettingsException]
 * for combinations the specs forbid.
 */
internal data class TopologySettings(
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
        TopologyRules.check(seeds.distinct().size, srv = false, directConnection == true, replicaSetName, loadBalanced)
            ?.let { throw InvalidTopologySettingsException(it) }
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
internal class InvalidTopologySettingsException(message: String) : InvalidSettingsException(message)
