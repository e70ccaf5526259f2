package dev.mooring.sdam

import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DriverInfo
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.settings.SettingsRules

/**
 * Everything a cluster needs: the seed list (or the SRV name to resolve), discovery and
 * monitoring options, server selection, retry and concern defaults, and how connections are
 * opened ([connection]) and pooled ([pool]).
 *
 * Build it from a connection string ([fromUri], [fromConnectionString]) or with the Kotlin
 * DSL ([mongoClusterSettings]); both produce the same objects and both go through the same
 * validation in [init], which throws [InvalidSettingsException] (the URI entry points throw
 * its subclass [InvalidConnectionStringException]) for combinations the specs forbid:
 * `directConnection` with several hosts or with SRV, `loadBalanced` with several hosts, a
 * replica set name or `directConnection`, `srvMaxHosts` with a replica set name or
 * `loadBalanced`, SRV-only options without SRV, out-of-range numbers, and credentials that
 * break their mechanism's rules (auth.md).
 *
 * Immutable and safe to share between threads; [toString] never shows a password.
 */
public data class MongoClusterSettings(
    /** The seed list. Empty only while an SRV name ([srvHost]) is still to be resolved. */
    val hosts: List<ServerAddress> = listOf(ServerAddress("localhost")),
    /** The `mongodb+srv` host name to resolve, or null for a plain seed list. */
    val srvHost: String? = null,
    /** The SRV service name (`srvServiceName`); only with [srvHost]. */
    val srvServiceName: String = DEFAULT_SRV_SERVICE_NAME,
    /** The most hosts taken from SRV records (`srvMaxHosts`); 0 = no limit; only with [srvHost]. */
    val srvMaxHosts: Int = 0,
    /** Connect to the single seed in Single topology (`directConnection`). */
    val directConnection: Boolean = false,
    /** The required replica set name (`replicaSet`), or null. */
    val replicaSet: String? = null,
    /** Interval between regular monitoring checks (`heartbeatFrequencyMS`), at least 500. */
    val heartbeatFrequencyMS: Long = 10_000,
    /** The latency window of server selection (`localThresholdMS`). */
    val localThresholdMS: Long = 15,
    /** How long server selection may wait (`serverSelectionTimeoutMS`), positive. */
    val serverSelectionTimeoutMS: Long = 30_000,
    /** Streaming or polling monitors (`serverMonitoringMode`). */
    val serverMonitoringMode: ServerMonitoringMode = ServerMonitoringMode.AUTO,
    /** The default read preference (`readPreference`, `readPreferenceTags`, `maxStalenessSeconds`). */
    val readPreference: ReadPreference = ReadPreference.PRIMARY,
    /** The client-side operation timeout (`timeoutMS`), 0 = no limit, null = not set. */
    val timeoutMS: Long? = null,
    /** Retry reads once on retryable errors (`retryReads`). */
    val retryReads: Boolean = true,
    /** Retry writes once on retryable errors (`retryWrites`). */
    val retryWrites: Boolean = true,
    /**
     * The default read concern level (`readConcernLevel`), or null for the server default: the read concern of the
     * `mooring-driver` module's databases and collections (their reads send it). [MongoCluster.runCommand] and the other
     * command-level calls send the command as given and add none (run-command.md).
     */
    val readConcernLevel: String? = null,
    /** The default write concern (`w`, `wTimeoutMS`, `journal`). */
    val writeConcern: WriteConcern = WriteConcern.DEFAULT,
    /** The most overload retries (`maxAdaptiveRetries`, client-backpressure.md). */
    val maxAdaptiveRetries: Int = 2,
    /** Whether overload retries may pick another server (`enableOverloadRetargeting`). */
    val enableOverloadRetargeting: Boolean = false,
    /** How each connection is opened: timeouts, app name, credential, TLS, compression. */
    val connection: ConnectionSettings = ConnectionSettings(),
    /** Connection pool options. */
    val pool: ConnectionPoolSettings = ConnectionPoolSettings(),
    /** Where the DNS queries of a `mongodb+srv` seed list and of SRV polling go (default: the system's resolver). */
    val dnsResolver: DnsResolverSettings = DnsResolverSettings.SYSTEM,
    /** Where this client's structured log messages go besides SLF4J: a per-client sink, levels, truncation (logging.md). */
    val logging: LoggingSettings = LoggingSettings.DEFAULT,
    /**
     * Libraries wrapping Mooring, appended to the handshake metadata (handshake.md "Supporting
     * Wrapping Libraries"); duplicates count once. More can be appended at run time with
     * [MongoCluster.appendMetadata].
     */
    val driverInfo: List<DriverInfo> = emptyList(),
    /** OpenTelemetry tracing of operations and commands (off unless enabled here or by its environment variable). */
    val tracing: TracingSettings = TracingSettings.DEFAULT,
) {
    init {
        SettingsRules.check(this)?.let { throw InvalidSettingsException(it) }
    }

    /**
     * Load-balanced mode (`loadBalanced`). Its one place is [ConnectionSettings.loadBalanced] of
     * [connection] (the handshake and the pools need it there); the DSL's and the URI's
     * `loadBalanced` set it.
     */
    public val loadBalanced: Boolean get() = connection.loadBalanced

    /**
     * The SOCKS5 proxy of all connections, or null. Its one place is [ConnectionSettings.proxy] of
     * [connection] (every connection opens through it); the DSL's and the URI's proxy options set it.
     */
    public val proxy: ProxySettings? get() = connection.proxy

    override fun toString(): String =
        "MongoClusterSettings(hosts=$hosts, srvHost=$srvHost, srvServiceName=$srvServiceName, srvMaxHosts=$srvMaxHosts, " +
            "directConnection=$directConnection, replicaSet=$replicaSet, loadBalanced=$loadBalanced, " +
            "heartbeatFrequencyMS=$heartbeatFrequencyMS, localThresholdMS=$localThresholdMS, " +
            "serverSelectionTimeoutMS=$serverSelectionTimeoutMS, serverMonitoringMode=$serverMonitoringMode, " +
            "readPreference=$readPreference, timeoutMS=$timeoutMS, retryReads=$retryReads, retryWrites=$retryWrites, " +
            "readConcernLevel=$readConcernLevel, writeConcern=$writeConcern, maxAdaptiveRetries=$maxAdaptiveRetries, " +
            "enableOverloadRetargeting=$enableOverloadRetargeting, proxy=$proxy, connection=$connection, pool=$pool, dnsResolver=$dnsResolver, logging=$logging, driverInfo=$driverInfo, tracing=$tracing)"

    public companion object {
        /** The default SRV service name. */
        public const val DEFAULT_SRV_SERVICE_NAME: String = "mongodb"

        /** The smallest allowed [heartbeatFrequencyMS] (the SDAM spec's minHeartbeatFrequencyMS). */
        public const val MIN_HEARTBEAT_FREQUENCY_MS: Long = 500

        /**
         * The settings a connection string describes: its hosts (or SRV name), options and
         * credential over the defaults. Pure; throws nothing (the connection string was
         * validated when parsed).
         */
        @JvmStatic
        public fun fromConnectionString(cs: ConnectionString): MongoClusterSettings = cs.settings

        /**
         * Parses [uri] and returns its settings. Throws [InvalidConnectionStringException] when
         * the URI is malformed or breaks a rule; warnings are logged (see [ConnectionString.warnings]).
         */
        @JvmStatic
        public fun fromUri(uri: String): MongoClusterSettings = ConnectionString.parse(uri).settings
    }
}
