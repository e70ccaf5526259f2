package dev.mooring.sdam.internal.srv

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoClusterSettings

/**
 * Internal API, not stable: the outcome of the initial DNS seedlist discovery of one
 * `mongodb+srv` cluster. Immutable.
 */
internal class SrvResolution internal constructor(
    /** The settings to start the cluster with: the seed list (after srvMaxHosts), TXT options applied, the DNS resolver installed. */
    internal val settings: MongoClusterSettings,
    /** Every SRV target the lookup returned (all verified), before srvMaxHosts. */
    internal val records: List<ServerAddress>,
    /** The TXT record's options by canonical name (`authSource`, `replicaSet`, `loadBalanced`); empty without a TXT record. */
    internal val txtOptions: Map<String, String>,
    /** When to rescan (polling-srv-records-for-mongos-discovery.md): the lowest SRV TTL, at least 60 s. */
    internal val rescanIntervalMS: Long,
) {
    /** The seed list the cluster starts with. */
    internal val seeds: List<ServerAddress> get() = settings.hosts

    /**
     * The effective `authSource`: the credential's source with a credential, else the one the
     * URI or the TXT record stated (the URI's wins), or null.
     */
    internal var authSource: String? = null
        internal set

    override fun toString(): String = "SrvResolution(seeds=$seeds, records=$records, txtOptions=$txtOptions, rescanIntervalMS=$rescanIntervalMS)"
}
