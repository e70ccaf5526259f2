package dev.mooring.sdam.internal.settings

import dev.mooring.cmap.DefaultConnectionFactory
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
            !srv && s.hosts.isEmpty() -> "at least one host is required"
            srv && s.srvHost!!.isEmpty() -> "srvHost must not be empty"
            !srv && s.srvServiceName != MongoClusterSettings.DEFAULT_SRV_SERVICE_NAME ->
                "srvServiceName is only allowed with a mongodb+srv URI"
            !srv && s.srvMaxHosts != 0 -> "srvMaxHosts is only allowed with a mongodb+srv URI"
            !isValidSrvServiceName(s.srvServiceName) -> "srvServiceName '${s.srvServiceName}' is not a valid SRV service name"
            s.srvMaxHosts < 0 -> "srvMaxHosts must be >= 0, was ${s.srvMaxHosts}"
            s.srvMaxHosts > 0 && s.replicaSet != null -> "srvMaxHosts cannot be combined with replicaSet"
            s.srvMaxHosts > 0 && s.loadBalanced -> "srvMaxHosts cannot be combined with loadBalanced=true"
            s.directConnection && srv -> "directConnection=true cannot be used with a mongodb+srv URI"
            s.directConnection && s.hosts.size > 1 -> "directConnection=true cannot be used with several hosts"
            s.loadBalanced && !srv && s.hosts.size > 1 -> "loadBalanced=true cannot be used with several hosts"
            s.loadBalanced && s.replicaSet != null -> "loadBalanced=true cannot be combined with replicaSet"
            s.loadBalanced && s.directConnection -> "loadBalanced=true cannot be combined with directConnection=true"
            s.proxy != null && s.connection.proxy != null && s.proxy != s.connection.proxy -> "proxy and connection.proxy name different proxies"
            s.replicaSet != null && s.replicaSet.isEmpty() -> "replicaSet must not be empty"
            s.heartbeatFrequencyMS < MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS ->
                "heartbeatFrequencyMS must be >= ${MongoClusterSettings.MIN_HEARTBEAT_FREQUENCY_MS}, was ${s.heartbeatFrequencyMS}"
            s.localThresholdMS < 0 -> "localThresholdMS must be >= 0, was ${s.localThresholdMS}"
            s.serverSelectionTimeoutMS <= 0 -> "serverSelectionTimeoutMS must be > 0, was ${s.serverSelectionTimeoutMS}"
            s.timeoutMS != null && s.timeoutMS < 0 -> "timeoutMS must be >= 0, was ${s.timeoutMS}"
            s.maxAdaptiveRetries < 0 -> "maxAdaptiveRetries must be >= 0, was ${s.maxAdaptiveRetries}"
            s.readConcernLevel != null && s.readConcernLevel.isEmpty() -> "readConcernLevel must not be empty"
            else -> checkConnection(s)
        }
    }

    private fun checkConnection(s: MongoClusterSettings): String? {
        val c = s.connection
        return when {
            c.connectTimeoutMS < 0 -> "connectTimeoutMS must be >= 0, was ${c.connectTimeoutMS}"
            c.socketTimeoutMS < 0 -> "socketTimeoutMS must be >= 0, was ${c.socketTimeoutMS}"
            c.zlibCompressionLevel !in -1..9 -> "zlibCompressionLevel must be in -1..9, was ${c.zlibCompressionLevel}"
            c.eventLoopThreads !in 1..DefaultConnectionFactory.MAX_EVENT_LOOPS ->
                "eventLoopThreads must be in 1..${DefaultConnectionFactory.MAX_EVENT_LOOPS}, was ${c.eventLoopThreads}"
            c.compressors.any { it !in COMPRESSORS } ->
                "compressors must be among ${COMPRESSORS.joinToString()}, got ${c.compressors.filter { it !in COMPRESSORS }}"
            c.compressors.toSet().size != c.compressors.size -> "compressors must not repeat a name"
            c.appName != null && c.appName!!.toByteArray(Charsets.UTF_8).size > MAX_APP_NAME_BYTES ->
                "appname must be at most $MAX_APP_NAME_BYTES bytes of UTF-8"
            else -> c.credential?.let { CredentialRules.check(it) }
        }
    }

    /** Compressors the wire protocol defines (OP_COMPRESSED.md). */
    val COMPRESSORS: List<String> = listOf("snappy", "zlib", "zstd")

    /** The handshake's limit on the application name. */
    const val MAX_APP_NAME_BYTES: Int = 128
}
