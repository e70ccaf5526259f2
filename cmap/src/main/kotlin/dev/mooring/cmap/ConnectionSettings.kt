package dev.mooring.cmap

/**
 * The declared Stable API (versioned-api.md's `serverApi` client option; never a URI option).
 * Immutable.
 *
 * When declared, every command a connection sends carries `apiVersion`, plus `apiStrict` and
 * `apiDeprecationErrors` when the user set them (even to the server's default) and never when not
 * — `getMore`, `killCursors`, `endSessions` and authentication commands included — and every
 * handshake and monitoring check is `hello` over OP_MSG (never the legacy hello). The command
 * document is not inspected: API fields the caller put in a command are replaced by the declared
 * ones (versioned-api.md leaves declaring both undefined; Mooring's rule is "the client wins").
 *
 * @property version one of [KNOWN_VERSIONS]; any other is refused at construction, since a new
 *   API version may need driver changes.
 */
public data class ServerApi(
    val version: String = V1,
    val strict: Boolean? = null,
    val deprecationErrors: Boolean? = null,
) {
    init {
        require(version in KNOWN_VERSIONS) {
            "unknown Stable API version '$version': this version of Mooring supports ${KNOWN_VERSIONS.joinToString { "'$it'" }}"
        }
    }

    public companion object {
        /** Stable API version 1. */
        public const val V1: String = "1"

        /** The API versions this version of Mooring can declare. */
        public val KNOWN_VERSIONS: Set<String> = setOf(V1)
    }
}

/**
 * TLS options as the URI options spec names them. Immutable.
 *
 * [sslContext] is a user-supplied context (from code only, never from a URI); when set, it
 * replaces tlsCAFile, tlsCertificateKeyFile and tlsAllowInvalidCertificates (the context decides
 * trust and client keys), while host name verification still follows [allowInvalidHostnames].
 * It is compared by identity and shown in [toString] only as present or absent.
 */
public data class TlsSettings(
    val enabled: Boolean = false,
    val allowInvalidCertificates: Boolean = false,
    val allowInvalidHostnames: Boolean = false,
    val caFile: String? = null,
    val certificateKeyFile: String? = null,
    val certificateKeyFilePassword: String? = null,
    val disableOcspEndpointCheck: Boolean = false,
    val disableCertificateRevocationCheck: Boolean = false,
    val sslContext: javax.net.ssl.SSLContext? = null,
) {
    override fun toString(): String =
        "TlsSettings(enabled=$enabled, allowInvalidCertificates=$allowInvalidCertificates, " +
            "allowInvalidHostnames=$allowInvalidHostnames, caFile=$caFile, certificateKeyFile=$certificateKeyFile, " +
            "certificateKeyFilePassword=${if (certificateKeyFilePassword != null) "<hidden>" else "null"}" +
            (if (sslContext != null) ", sslContext=<custom>" else "") + ")"
}

/**
 * How one connection is opened and used: timeouts, handshake metadata, auth, TLS,
 * compression. Immutable; shared by every connection of a cluster.
 */
public data class ConnectionSettings(
    /** Bound on TCP connect plus the handshake; 0 means no limit. */
    val connectTimeoutMS: Long = 10_000,
    /** Bound on each socket read and write; 0 means no limit. */
    val socketTimeoutMS: Long = 0,
    val appName: String? = null,
    val credential: MongoCredential? = null,
    val tls: TlsSettings = TlsSettings(),
    /** Compressors to offer, in preference order (`snappy`, `zlib`, `zstd`). */
    val compressors: List<String> = emptyList(),
    /** zlib level -1..9 (-1 = library default). */
    val zlibCompressionLevel: Int = -1,
    val serverApi: ServerApi? = null,
    val loadBalanced: Boolean = false,
    /** How server host names are resolved; null = the JVM's resolver on `Dispatchers.IO`. See [HostNameResolver]. */
    val hostNameResolver: HostNameResolver? = null,
    /**
     * PLAIN sends the password as it is: without TLS anyone on the path can read it, so a PLAIN
     * credential without TLS is rejected at construction unless this is true (for example on a
     * loopback or an otherwise encrypted link). It has no effect on other mechanisms.
     */
    val allowPlainAuthWithoutTls: Boolean = false,
    /**
     * The SOCKS5 proxy every TCP connection goes through, or null for direct connections. A
     * `MongoCluster` takes it from `MongoClusterSettings.proxy`.
     */
    val proxy: ProxySettings? = null,
    /**
     * How many event loops (selector threads, `mooring-loop-N-i`) serve the sockets of the
     * connection factory's connections (pooled, monitoring and RTT): 1..[DefaultConnectionFactory.MAX_EVENT_LOOPS],
     * default one per core (at most 16). Each connection belongs to one loop for its life. Read
     * once, when the factory is created; not a URI option. Fewer loops can pay when the callers
     * run on the loops (`MongoCluster.dispatcher`) and other busy threads share the machine's
     * cores; callers on their own dispatcher do better with the default. The `bench` module
     * measures `mooring-1loop` beside the default: measure before changing it.
     */
    val eventLoopThreads: Int = DEFAULT_EVENT_LOOP_THREADS,
) {
    /** Defaults shared by every [ConnectionSettings]. */
    public companion object {
        /** One event loop per core (`Runtime.availableProcessors()`), at most [DefaultConnectionFactory.MAX_EVENT_LOOPS]. */
        public val DEFAULT_EVENT_LOOP_THREADS: Int =
            Runtime.getRuntime().availableProcessors().coerceIn(1, DefaultConnectionFactory.MAX_EVENT_LOOPS)
    }
}

/**
 * Connection pool options (CMAP). Immutable.
 *
 * @property maxPoolSize the most connections (available + in use + pending); 0 = unlimited.
 * @property minPoolSize connections the maintenance coroutine keeps open while the pool is ready.
 * @property maxIdleTimeMS an available connection idle longer than this is perished; 0 = never.
 * @property maxConnecting the most connections being established at once.
 * @property waitQueueTimeoutMS bound on the whole checkout wait; 0 = no limit.
 * @property maintenanceIntervalMS how often the maintenance coroutine runs (the spec runner's backgroundThreadIntervalMS);
 *   a negative value means it never runs (for tests only: no idle pruning, no minPoolSize population). 0 is invalid.
 */
public data class ConnectionPoolSettings(
    val maxPoolSize: Int = 100,
    val minPoolSize: Int = 0,
    val maxIdleTimeMS: Long = 0,
    val maxConnecting: Int = 2,
    val waitQueueTimeoutMS: Long = 0,
    val maintenanceIntervalMS: Long = 10_000,
) {
    init {
        require(maxPoolSize >= 0) { "maxPoolSize must be >= 0, was $maxPoolSize" }
        require(minPoolSize >= 0) { "minPoolSize must be >= 0, was $minPoolSize" }
        require(maxPoolSize == 0 || minPoolSize <= maxPoolSize) { "minPoolSize ($minPoolSize) must not exceed maxPoolSize ($maxPoolSize)" }
        require(maxIdleTimeMS >= 0) { "maxIdleTimeMS must be >= 0" }
        require(maxConnecting > 0) { "maxConnecting must be > 0, was $maxConnecting" }
        require(waitQueueTimeoutMS >= 0) { "waitQueueTimeoutMS must be >= 0" }
        require(maintenanceIntervalMS != 0L) { "maintenanceIntervalMS must be > 0 (or negative: never run)" }
    }
}
