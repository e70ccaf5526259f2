package dev.mooring.sdam.internal.settings

/**
 * The one home of the rules on the options that decide the initial topology (uri-options.md,
 * load-balancers.md, server-discovery-and-monitoring.md "Initial TopologyDescription"), applied by
 * both [SettingsRules] (a cluster's settings, whatever built them) and `TopologySettings` (the
 * pure SDAM engine's input). [seeds] counts distinct seeds (a seed given twice is one server).
 * Stateless.
 */
internal object TopologyRules {
    /** Null when the combination is valid, else the first broken rule. */
    fun check(seeds: Int, srv: Boolean, directConnection: Boolean, replicaSet: String?, loadBalanced: Boolean): String? = when {
        !srv && seeds == 0 -> "at least one host is required"
        directConnection && srv -> "directConnection=true cannot be used with a mongodb+srv URI"
        directConnection && seeds > 1 -> "directConnection=true cannot be used with several hosts"
        loadBalanced && !srv && seeds > 1 -> "loadBalanced=true cannot be used with several hosts"
        loadBalanced && replicaSet != null -> "loadBalanced=true cannot be combined with replicaSet"
        loadBalanced && directConnection -> "loadBalanced=true cannot be combined with directConnection=true"
        replicaSet != null && replicaSet.isEmpty() -> "replicaSet must not be empty"
        else -> null
    }
}
