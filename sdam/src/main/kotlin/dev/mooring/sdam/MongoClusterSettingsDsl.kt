package dev.mooring.sdam

import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.ServerApi
import dev.mooring.cmap.TlsSettings
import dev.mooring.events.InvalidServerAddressException
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.settings.CredentialRules

/** Marks the receivers of the settings DSL so inner blocks cannot reach outer builders implicitly. */
@DslMarker
public annotation class MongoSettingsDsl

/**
 * Builds [MongoClusterSettings] with the Kotlin DSL:
 *
 * ```kotlin
 * val settings = mongoClusterSettings {
 *     applyConnectionString("mongodb://a.example.com,b.example.com/?replicaSet=rs0")
 *     pool { maxPoolSize = 50 }
 *     tls { enabled = true }
 *     credential(username = "app", password = "secret".toCharArray())
 * }
 * ```
 *
 * Statements apply in order, so a later statement overrides an earlier one
 * ([MongoClusterSettingsBuilder.applyConnectionString] sets only the hosts, the credential and the
 * options its URI states). The result is validated exactly like a parsed URI; throws
 * [InvalidSettingsException] naming the broken rule. Runs [block] on the calling thread.
 */
public fun mongoClusterSettings(block: MongoClusterSettingsBuilder.() -> Unit): MongoClusterSettings =
    MongoClusterSettingsBuilder().apply(block).build()

/**
 * The mutable receiver of [mongoClusterSettings]; every property starts at the
 * [MongoClusterSettings] default. Not thread-safe: use one builder from one thread, inside
 * its block.
 */
@MongoSettingsDsl
public class MongoClusterSettingsBuilder internal constructor() {
    private var hostsGiven = false

    /**
     * The seed list (default `localhost:27017`); see [hosts] to set it from strings. With
     * [srvHost] set and no hosts given, the built settings have no hosts until SRV resolution.
     */
    public var hosts: List<ServerAddress> = listOf(ServerAddress("localhost"))
        set(value) {
            field = value
            hostsGiven = true
        }

    /** The `mongodb+srv` name to resolve, or null. */
    public var srvHost: String? = null
    /** `srvServiceName`. */
    public var srvServiceName: String = MongoClusterSettings.DEFAULT_SRV_SERVICE_NAME
    /** `srvMaxHosts`. */
    public var srvMaxHosts: Int = 0
    /** `directConnection`. */
    public var directConnection: Boolean = false
    /** `replicaSet`. */
    public var replicaSet: String? = null
    /** `loadBalanced`; also sets the connections' load-balanced flag. */
    public var loadBalanced: Boolean = false
    /** `heartbeatFrequencyMS`. */
    public var heartbeatFrequencyMS: Long = 10_000
    /** `localThresholdMS`. */
    public var localThresholdMS: Long = 15
    /** `serverSelectionTimeoutMS`. */
    public var serverSelectionTimeoutMS: Long = 30_000
    /** `serverMonitoringMode`. */
    public var serverMonitoringMode: ServerMonitoringMode = ServerMonitoringMode.AUTO
    /** `readPreference`, `readPreferenceTags` and `maxStalenessSeconds`. */
    public var readPreference: ReadPreference = ReadPreference.PRIMARY
    /** `timeoutMS`. */
    public var timeoutMS: Long? = null
    /** `retryReads`. */
    public var retryReads: Boolean = true
    /** `retryWrites`. */
    public var retryWrites: Boolean = true
    /** `readConcernLevel`. */
    public var readConcernLevel: String? = null
    /** `w`, `wTimeoutMS`, `journal`. */
    public var writeConcern: WriteConcern = WriteConcern.DEFAULT
    /** `maxAdaptiveRetries`. */
    public var maxAdaptiveRetries: Int = 2
    /** `enableOverloadRetargeting`. */
    public var enableOverloadRetargeting: Boolean = false
    /** The SOCKS5 proxy, or null. */
    public var proxy: ProxySettings? = null
    /** Where the DNS queries of `mongodb+srv` go (see [DnsResolverSettings]); default the system's resolver. */
    public var dnsResolver: DnsResolverSettings = DnsResolverSettings.SYSTEM
    /** Where the client's structured log messages go besides SLF4J (see [LoggingSettings]); default SLF4J only. */
    public var logging: LoggingSettings = LoggingSettings.DEFAULT
    /** OpenTelemetry tracing (also `tracing { enabled = true }`). */
    public var tracing: TracingSettings = TracingSettings.DEFAULT
    /** Libraries wrapping Mooring, appended to the handshake metadata; see [MongoClusterSettings.driverInfo]. */
    public var driverInfo: List<DriverInfo> = emptyList()

    private var connectionSettings = ConnectionSettings()
    private var poolSettings = ConnectionPoolSettings()

    /** Sets the seed list from `host[:port]`, `[ipv6]:port` or socket path strings; throws [InvalidSettingsException] for a bad one. */
    public fun hosts(vararg hosts: String) {
        this.hosts = hosts.map {
            try {
                ServerAddress.parse(it)
            } catch (e: InvalidServerAddressException) {
                throw InvalidSettingsException("invalid host: ${e.message}", e)
            }
        }
    }

    /** Sets the seed list. */
    public fun hosts(vararg hosts: ServerAddress) {
        this.hosts = hosts.toList()
    }

    /** Adjusts the connection pool options, starting from their current values. */
    /** Sets [tracing]: `tracing { enabled = true; queryTextMaxLength = 1000 }`. */
    public fun tracing(block: TracingSettingsBuilder.() -> Unit) {
        tracing = TracingSettingsBuilder(tracing).apply(block).build()
    }

    public fun pool(block: ConnectionPoolSettingsBuilder.() -> Unit) {
        poolSettings = ConnectionPoolSettingsBuilder(poolSettings).apply(block).build()
    }

    /** Adjusts how connections are opened, starting from the current values. */
    public fun connection(block: ConnectionSettingsBuilder.() -> Unit) {
        connectionSettings = ConnectionSettingsBuilder(connectionSettings).apply(block).build()
    }

    /** Adjusts the TLS options (shortcut for `connection { tls { … } }`). */
    public fun tls(block: TlsSettingsBuilder.() -> Unit) {
        connection { tls(block) }
    }

    /** Sets a SOCKS5 proxy. */
    public fun proxy(host: String, port: Int = ProxySettings.DEFAULT_PORT, username: String? = null, password: String? = null) {
        proxy = proxySettings(host, port, username, password)
    }

    /**
     * Sets the credential with auth.md's defaults: [source] defaults to `$external` for
     * GSSAPI, X.509, AWS and OIDC and to `admin` otherwise (`$external` for PLAIN); GSSAPI gets
     * `SERVICE_NAME=mongodb` unless given. The password array is copied. Validated at build time.
     */
    public fun credential(
        username: String?,
        password: CharArray? = null,
        source: String? = null,
        mechanism: String? = null,
        mechanismProperties: Map<String, Any> = emptyMap(),
    ) {
        connectionSettings = connectionSettings.copy(
            credential = CredentialRules.create(mechanism, username, password, source, null, mechanismProperties),
        )
    }

    /** Sets (or with null clears) the credential as given. */
    public fun credential(credential: MongoCredential?) {
        connectionSettings = connectionSettings.copy(credential = credential)
    }

    /**
     * Applies a connection string: its hosts (or SRV name, clearing [hosts]), its credential
     * when it has one, and each option it states, over the current values. A `mongodb+srv` URI
     * enables TLS unless it says `tls=false`. Throws [InvalidConnectionStringException] when
     * [uri] is invalid.
     */
    public fun applyConnectionString(uri: String) {
        applyConnectionString(ConnectionString.parse(uri))
    }

    /** Applies an already parsed connection string; see the `String` overload. */
    public fun applyConnectionString(cs: ConnectionString) {
        ConnectionStringApplier.apply(cs, this)
    }

    /** Starts from [settings] (every field), for example to derive a variant. */
    public fun applySettings(settings: MongoClusterSettings) {
        hosts = settings.hosts; hostsGiven = settings.srvHost == null || settings.hosts.isNotEmpty(); srvHost = settings.srvHost; srvServiceName = settings.srvServiceName
        srvMaxHosts = settings.srvMaxHosts; directConnection = settings.directConnection; replicaSet = settings.replicaSet
        loadBalanced = settings.loadBalanced; heartbeatFrequencyMS = settings.heartbeatFrequencyMS
        localThresholdMS = settings.localThresholdMS; serverSelectionTimeoutMS = settings.serverSelectionTimeoutMS
        serverMonitoringMode = settings.serverMonitoringMode; readPreference = settings.readPreference
        timeoutMS = settings.timeoutMS; retryReads = settings.retryReads; retryWrites = settings.retryWrites
        readConcernLevel = settings.readConcernLevel; writeConcern = settings.writeConcern
        maxAdaptiveRetries = settings.maxAdaptiveRetries; enableOverloadRetargeting = settings.enableOverloadRetargeting
        proxy = settings.proxy; connectionSettings = settings.connection; poolSettings = settings.pool
        dnsResolver = settings.dnsResolver
        logging = settings.logging
        tracing = settings.tracing
        driverInfo = settings.driverInfo
    }

    /** The proxy of the connections: [proxy], or the one a `connection { }` block kept; two different ones are refused. */
    private fun connectionProxy(): ProxySettings? {
        val kept = connectionSettings.proxy
        if (proxy != null && kept != null && proxy != kept) throw InvalidSettingsException("proxy and connection.proxy name different proxies")
        return proxy ?: kept
    }

    internal fun build(): MongoClusterSettings = MongoClusterSettings(
        hosts = if (srvHost != null && !hostsGiven) emptyList() else hosts, srvHost = srvHost, srvServiceName = srvServiceName, srvMaxHosts = srvMaxHosts,
        directConnection = directConnection, replicaSet = replicaSet,
        heartbeatFrequencyMS = heartbeatFrequencyMS, localThresholdMS = localThresholdMS,
        serverSelectionTimeoutMS = serverSelectionTimeoutMS, serverMonitoringMode = serverMonitoringMode,
        readPreference = readPreference, timeoutMS = timeoutMS, retryReads = retryReads, retryWrites = retryWrites,
        readConcernLevel = readConcernLevel, writeConcern = writeConcern, maxAdaptiveRetries = maxAdaptiveRetries,
        enableOverloadRetargeting = enableOverloadRetargeting,
        connection = connectionSettings.copy(loadBalanced = loadBalanced, proxy = connectionProxy()), pool = poolSettings, dnsResolver = dnsResolver,
        logging = logging,
        tracing = tracing,
        driverInfo = driverInfo,
    )
}

/** Builds [ConnectionPoolSettings] inside `pool { }`. Not thread-safe. */
@MongoSettingsDsl
public class ConnectionPoolSettingsBuilder internal constructor(from: ConnectionPoolSettings) {
    /** `maxPoolSize`; 0 = unlimited. */
    public var maxPoolSize: Int = from.maxPoolSize
    /** `minPoolSize`. */
    public var minPoolSize: Int = from.minPoolSize
    /** `maxIdleTimeMS`; 0 = never idle out. */
    public var maxIdleTimeMS: Long = from.maxIdleTimeMS
    /** `maxConnecting`. */
    public var maxConnecting: Int = from.maxConnecting
    /** `waitQueueTimeoutMS`; 0 = no limit. */
    public var waitQueueTimeoutMS: Long = from.waitQueueTimeoutMS
    /** How often the maintenance coroutine runs. */
    public var maintenanceIntervalMS: Long = from.maintenanceIntervalMS

    internal fun build(): ConnectionPoolSettings = settingsRule {
        ConnectionPoolSettings(maxPoolSize, minPoolSize, maxIdleTimeMS, maxConnecting, waitQueueTimeoutMS, maintenanceIntervalMS)
    }
}

/** Builds [ConnectionSettings] inside `connection { }`. Not thread-safe. */
@MongoSettingsDsl
public class ConnectionSettingsBuilder internal constructor(from: ConnectionSettings) {
    /** `connectTimeoutMS`; 0 = no limit. */
    public var connectTimeoutMS: Long = from.connectTimeoutMS
    /** `socketTimeoutMS`; 0 = no limit. */
    public var socketTimeoutMS: Long = from.socketTimeoutMS
    /** `appname`. */
    public var appName: String? = from.appName
    /** The credential; prefer [MongoClusterSettingsBuilder.credential] for auth.md's defaults. */
    public var credential: MongoCredential? = from.credential
    /** `compressors`, in preference order. */
    public var compressors: List<String> = from.compressors
    /** `zlibCompressionLevel`. */
    public var zlibCompressionLevel: Int = from.zlibCompressionLevel
    /** The declared Stable API, or null. */
    public var serverApi: ServerApi? = from.serverApi
    /**
     * Lets a PLAIN credential send its password over a connection without TLS (rejected at
     * construction otherwise); see [ConnectionSettings.allowPlainAuthWithoutTls].
     */
    public var allowPlainAuthWithoutTls: Boolean = from.allowPlainAuthWithoutTls
    /** How many event loops the connections use; see [ConnectionSettings.eventLoopThreads]. */
    public var eventLoopThreads: Int = from.eventLoopThreads
    private var tlsSettings: TlsSettings = from.tls
    private val loadBalanced = from.loadBalanced
    private val hostNameResolver = from.hostNameResolver
    private val proxy = from.proxy

    /** Adjusts the TLS options, starting from their current values. */
    public fun tls(block: TlsSettingsBuilder.() -> Unit) {
        tlsSettings = TlsSettingsBuilder(tlsSettings).apply(block).build()
    }

    internal fun build(): ConnectionSettings = ConnectionSettings(
        connectTimeoutMS, socketTimeoutMS, appName, credential, tlsSettings, compressors, zlibCompressionLevel, serverApi, loadBalanced,
        hostNameResolver = hostNameResolver, allowPlainAuthWithoutTls = allowPlainAuthWithoutTls,
        proxy = proxy, eventLoopThreads = eventLoopThreads,
    )
}

/** Builds [TlsSettings] inside `tls { }`. Not thread-safe. */
@MongoSettingsDsl
public class TlsSettingsBuilder internal constructor(from: TlsSettings) {
    /** `tls`. */
    public var enabled: Boolean = from.enabled
    /** `tlsAllowInvalidCertificates`. */
    public var allowInvalidCertificates: Boolean = from.allowInvalidCertificates
    /** `tlsAllowInvalidHostnames`. */
    public var allowInvalidHostnames: Boolean = from.allowInvalidHostnames
    /** `tlsCAFile`. */
    public var caFile: String? = from.caFile
    /** `tlsCertificateKeyFile`. */
    public var certificateKeyFile: String? = from.certificateKeyFile
    /** `tlsCertificateKeyFilePassword`. */
    public var certificateKeyFilePassword: String? = from.certificateKeyFilePassword
    /** `tlsDisableOCSPEndpointCheck`. */
    public var disableOcspEndpointCheck: Boolean = from.disableOcspEndpointCheck
    /** `tlsDisableCertificateRevocationCheck`. */
    public var disableCertificateRevocationCheck: Boolean = from.disableCertificateRevocationCheck
    /**
     * A context built in code (for example from a PKCS#12 or JKS key store holding the MONGODB-X509
     * client certificate); it replaces the CA and certificate files. See [TlsSettings.sslContext].
     */
    public var sslContext: javax.net.ssl.SSLContext? = from.sslContext

    /** `tlsInsecure`: relaxes certificate, hostname and OCSP endpoint checks together (or restores all three). */
    public var insecure: Boolean
        get() = allowInvalidCertificates && allowInvalidHostnames && disableOcspEndpointCheck
        set(value) {
            allowInvalidCertificates = value
            allowInvalidHostnames = value
            disableOcspEndpointCheck = value
        }

    internal fun build(): TlsSettings = TlsSettings(
        enabled, allowInvalidCertificates, allowInvalidHostnames, caFile, certificateKeyFile, certificateKeyFilePassword,
        disableOcspEndpointCheck, disableCertificateRevocationCheck, sslContext,
    )
}

/** Runs [block], turning the shared types' [IllegalArgumentException]s into [InvalidSettingsException]. */
internal inline fun <T> settingsRule(block: () -> T): T = try {
    block()
} catch (e: IllegalArgumentException) {
    throw InvalidSettingsException(e.message ?: "invalid settings", e)
}
