package dev.mooring.sdam.internal.settings

import dev.mooring.cmap.internal.connection.ConnectionSettingsRules
import dev.mooring.sdam.MongoClusterSettings

/**
 * The cross-option rules every [MongoClusterSettings] must satisfy, whatever built it
 * (uri-options.md, load-balancers.md, initial-dns-seedlist-discovery.md, the SDAM and CMAP
 * option ranges, auth.md). Stateless.
 */
internal object SettingsRules {
    private val serviceName = Regex("^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")

    /** True when [name] is a valid SRV service name (RFC 6335 letters, digits, hyphens; at most 62 characters). */
    fun isValidSrvServiceName(name: String): Boolean =
        name.length in 1..62 && serviceName.matches(name) && !name.contains("--") && name.any { it.isLetter() }

    /** Null when [s] is valid, else the first broken rule. */
    fun check(s: MongoClusterSettings): String? {
        val srv = s.srvHost != null
        return when {
            srv && s.srvHost!!.isEmpty() -> "srvHost must not be empty"
            !srv && s.srvServiceName != MongoClusterSettings.DEFAULT_SRV_SERVICE_NAME ->
                "srvServiceName is only allowed with a mongodb+srv URI"
            !srv && s.srvMaxHosts != 0 -> "srvMaxHosts is only allowed with a mongodb+srv URI"
            !isValidSrvServiceName(s.srvServiceName) -> "srvServiceName '${s.srvServiceName}' is not a valid SRV service name"
            s.srvMaxHosts < 0 -> "srvMaxHosts must be >= 0, was ${s.srvMaxHosts}"
            s.srvMaxHosts > 0 && s.replicaSet != null -> "srvMaxHosts cannot be combined with replicaSet"
            s.srvMaxHosts > 0 && s.loadBalanced -> "srvMaxHosts cannot be combined with loadBalanced=true"
            s.heartbeatFrequencyMS < MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS ->
                "heartbeatFrequencyMS must be >= ${MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS}, was ${s.heartbeatFrequencyMS}"
            s.localThresholdMS < 0 -> "localThresholdMS must be >= 0, was ${s.localThresholdMS}"
            s.serverSelectionTimeoutMS <= 0 -> "serverSelectionTimeoutMS must be > 0, was ${s.serverSelectionTimeoutMS}"
            s.timeoutMS != null && s.timeoutMS < 0 -> "timeoutMS must be >= 0, was ${s.timeoutMS}"
            s.maxAdaptiveRetries < 0 -> "maxAdaptiveRetries must be >= 0, was ${s.maxAdaptiveRetries}"
            s.readConcernLevel != null && s.readConcernLevel.isEmpty() -> "readConcernLevel must not be empty"
            else -> TopologyRules.check(s.hosts.distinct().size, srv, s.directConnection, s.replicaSet, s.loadBalanced) ?: checkConnection(s)
        }
    }

    /** The connection's own rules (cmap's [ConnectionSettingsRules], their one home), then the credential's. */
    private fun checkConnection(s: MongoClusterSettings): String? =
        ConnectionSettingsRules.check(s.connection) ?: s.connection.credential?.let { CredentialRules.check(it) }
}
