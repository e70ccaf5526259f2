package dev.mooring.java

import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.OidcCallback
import dev.mooring.events.EventBus
import dev.mooring.events.EventListener
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.java.internal.ListenerAdapter
import dev.mooring.java.internal.ListenerAdapters
import dev.mooring.sdam.TracingSettings
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoClusterSettingsBuilder
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.mongoClusterSettings
import java.util.function.Consumer

/**
 * The Java builder of [MongoClusterSettings] (get one from [MongoClusters.settingsBuilder]),
 * plus the listeners to register before the cluster publishes anything:
 *
 * ```java
 * ClusterSettingsBuilder builder = MongoClusters.settingsBuilder("mongodb://a,b/?replicaSet=rs0")
 *     .applyToPoolSettings(pool -> pool.maxPoolSize(50))
 *     .heartbeatFrequencyMS(2000)
 *     .addClusterListener(myClusterListener);
 * MongoClusterSettings settings = builder.build();           // the same object the DSL or a URI gives
 * try (JavaMongoCluster cluster = MongoClusters.create(builder)) { ... }
 * ```
 *
 * Every setter records a step; [build] applies them in call order through the Kotlin DSL
 * ([mongoClusterSettings]), so a later step overrides an earlier one, the result is the same
 * object the DSL and connection strings produce and it goes through the same validation:
 * [build] throws [InvalidSettingsException] (its subclass `InvalidConnectionStringException` for
 * a bad URI) naming the broken rule. Setters never throw except for null arguments.
 *
 * Not thread-safe: configure one builder from one thread. [build] may be called repeatedly.
 */
public class ClusterSettingsBuilder {
    private val steps = ArrayList<MongoClusterSettingsBuilder.() -> Unit>()
    private val listeners = ArrayList<ListenerAdapter>()
    private var bufferCapacity = EventBus.DEFAULT_BUFFER_CAPACITY

    /** Applies a connection string: its hosts (or SRV name), credential and each option it states. */
    public fun applyConnectionString(uri: String): ClusterSettingsBuilder = step { applyConnectionString(uri) }

    /** Starts from every field of [settings], for example to derive a variant. */
    public fun applySettings(settings: MongoClusterSettings): ClusterSettingsBuilder = step { applySettings(settings) }

    /** The seed list from `host[:port]`, `[ipv6]:port` or socket path strings. */
    public fun hosts(vararg hosts: String): ClusterSettingsBuilder = arrayOf(*hosts).let { h -> step { hosts(*h) } }

    /** The seed list. */
    public fun hosts(hosts: List<ServerAddress>): ClusterSettingsBuilder = hosts.toList().let { h -> step { this.hosts = h } }

    /** `directConnection`. */
    public fun directConnection(value: Boolean): ClusterSettingsBuilder = step { directConnection = value }

    /** `replicaSet`, or null. */
    public fun replicaSet(name: String?): ClusterSettingsBuilder = step { replicaSet = name }

    /** `loadBalanced`. */
    public fun loadBalanced(value: Boolean): ClusterSettingsBuilder = step { loadBalanced = value }

    /** `heartbeatFrequencyMS` (at least 500). */
    public fun heartbeatFrequencyMS(value: Long): ClusterSettingsBuilder = step { heartbeatFrequencyMS = value }

    /** `localThresholdMS`. */
    public fun localThresholdMS(value: Long): ClusterSettingsBuilder = step { localThresholdMS = value }

    /** `serverSelectionTimeoutMS` (positive). */
    public fun serverSelectionTimeoutMS(value: Long): ClusterSettingsBuilder = step { serverSelectionTimeoutMS = value }

    /** `serverMonitoringMode`. */
    public fun serverMonitoringMode(mode: ServerMonitoringMode): ClusterSettingsBuilder = step { serverMonitoringMode = mode }

    /** The default read preference. */
    public fun readPreference(readPreference: ReadPreference): ClusterSettingsBuilder = step { this.readPreference = readPreference }

    /** `timeoutMS` (0 = no limit), or null for not set. */
    public fun timeoutMS(value: Long?): ClusterSettingsBuilder = step { timeoutMS = value }

    /** `retryReads`. */
    public fun retryReads(value: Boolean): ClusterSettingsBuilder = step { retryReads = value }

    /** `retryWrites`. */
    public fun retryWrites(value: Boolean): ClusterSettingsBuilder = step { retryWrites = value }

    /** `readConcernLevel`, or null. */
    public fun readConcernLevel(level: String?): ClusterSettingsBuilder = step { readConcernLevel = level }

    /** The default write concern. */
    public fun writeConcern(writeConcern: WriteConcern): ClusterSettingsBuilder = step { this.writeConcern = writeConcern }

    /** A SOCKS5 proxy without authentication. */
    public fun proxy(host: String, port: Int): ClusterSettingsBuilder = step { proxy(host, port) }

    /**
     * Where this client's structured log messages go besides SLF4J: a [dev.mooring.events.LogSink]
     * with per-component levels and the max document length (see [LoggingSettings]).
     */
    public fun logging(settings: LoggingSettings): ClusterSettingsBuilder = step { logging = settings }

    /**
     * OpenTelemetry tracing of this cluster's operations and commands ([TracingSettings]; the
     * environment variable `OTEL_KOTLIN_INSTRUMENTATION_MONGODB_ENABLED` applies when this is not called).
     * [queryTextMaxLength] 0 leaves `db.query.text` out. Needs `io.opentelemetry:opentelemetry-api` and
     * `opentelemetry-extension-kotlin` on the classpath when [enabled].
     */
    public fun tracing(enabled: Boolean, queryTextMaxLength: Int): ClusterSettingsBuilder =
        step { tracing = TracingSettings(enabled, queryTextMaxLength) }

    /** A SOCKS5 proxy with username/password authentication. */
    public fun proxy(host: String, port: Int, username: String?, password: String?): ClusterSettingsBuilder = step { proxy(host, port, username, password) }

    /**
     * The credential, with auth.md's defaults for the source and mechanism properties
     * ([mechanism] null = negotiated SCRAM); the password array is copied. Validated at [build].
     */
    public fun credential(username: String?, password: CharArray?, source: String?, mechanism: String?): ClusterSettingsBuilder {
        val pw = password?.copyOf()
        return step { credential(username, pw, source, mechanism) }
    }

    /** A SCRAM credential (negotiated mechanism) authenticating against [source]. */
    public fun credential(username: String, password: CharArray, source: String): ClusterSettingsBuilder = credential(username, password, source, null)

    /**
     * MONGODB-OIDC with the machine workflow: [callback] supplies access tokens (cached per
     * cluster; called again after the server rejects one or asks for reauthentication).
     * [username] is passed to the callback (null: none).
     */
    public fun oidcCallback(username: String?, callback: OidcTokenCallback): ClusterSettingsBuilder =
        step { credential(username, mechanism = "MONGODB-OIDC", mechanismProperties = mapOf(OidcCallback.MACHINE_PROPERTY to callback.asOidcCallback())) }

    /**
     * MONGODB-OIDC with the human workflow: [callback] gets the identity provider's information
     * and, when it returned one before, a refresh token. Only hosts matching [allowedHosts]
     * (null: auth.md's default list; `*.` prefixes match subdomains) are authenticated.
     */
    public fun oidcHumanCallback(username: String?, callback: OidcTokenCallback, allowedHosts: List<String>?): ClusterSettingsBuilder {
        val props = mutableMapOf<String, Any>(OidcCallback.HUMAN_PROPERTY to callback.asOidcCallback())
        allowedHosts?.let { props[OidcCallback.ALLOWED_HOSTS_PROPERTY] = it.toList() }
        return step { credential(username, mechanism = "MONGODB-OIDC", mechanismProperties = props) }
    }

    /** The credential exactly as given, or null to clear it. */
    public fun credential(credential: MongoCredential?): ClusterSettingsBuilder = step { credential(credential) }

    /** Adjusts the connection pool options. */
    public fun applyToPoolSettings(block: Consumer<PoolSettingsBuilder>): ClusterSettingsBuilder {
        val pool = PoolSettingsBuilder().also { block.accept(it) }
        return step { pool { pool.steps.forEach { it() } } }
    }

    /** Adjusts how connections are opened. */
    public fun applyToConnectionSettings(block: Consumer<ConnectionOptionsBuilder>): ClusterSettingsBuilder {
        val connection = ConnectionOptionsBuilder().also { block.accept(it) }
        return step { connection { connection.steps.forEach { it() } } }
    }

    /** Adjusts the TLS options. */
    public fun applyToTlsSettings(block: Consumer<TlsOptionsBuilder>): ClusterSettingsBuilder {
        val tls = TlsOptionsBuilder().also { block.accept(it) }
        return step { tls { tls.steps.forEach { it() } } }
    }

    /** Registers [listener] before the cluster opens, so it also sees the opening events. */
    public fun addConnectionPoolListener(listener: ConnectionPoolListener): ClusterSettingsBuilder = listen(ListenerAdapters.pool(listener))

    /** Registers [listener] before the cluster opens. */
    public fun addServerMonitorListener(listener: ServerMonitorListener): ClusterSettingsBuilder = listen(ListenerAdapters.monitor(listener))

    /** Registers [listener] before the cluster opens, so it also sees ServerOpening. */
    public fun addServerListener(listener: ServerListener): ClusterSettingsBuilder = listen(ListenerAdapters.server(listener))

    /** Registers [listener] before the cluster opens, so it also sees clusterOpening. */
    public fun addClusterListener(listener: ClusterListener): ClusterSettingsBuilder = listen(ListenerAdapters.cluster(listener))

    /** Registers [listener] for the command monitoring events, before the cluster opens. */
    public fun addCommandListener(listener: CommandListener): ClusterSettingsBuilder = listen(ListenerAdapters.command(listener))

    /** Registers [listener] for every event, before the cluster opens. */
    public fun addEventListener(listener: EventListener): ClusterSettingsBuilder = listen(ListenerAdapters.any(listener))

    /**
     * How many events a subscriber of [JavaMongoCluster.events] may fall behind before it
     * misses events (default [EventBus.DEFAULT_BUFFER_CAPACITY]); positive.
     */
    public fun eventBufferCapacity(capacity: Int): ClusterSettingsBuilder {
        require(capacity > 0) { "eventBufferCapacity must be positive, was $capacity" }
        bufferCapacity = capacity
        return this
    }

    /**
     * The settings: the recorded steps applied in order by the Kotlin DSL. Throws
     * [InvalidSettingsException] naming the broken rule.
     */
    public fun build(): MongoClusterSettings = mongoClusterSettings { steps.forEach { it() } }

    @JvmSynthetic
    internal fun listenerAdapters(): List<ListenerAdapter> = listeners.toList()

    @JvmSynthetic
    internal fun eventBufferCapacity(): Int = bufferCapacity

    private fun step(s: MongoClusterSettingsBuilder.() -> Unit): ClusterSettingsBuilder = apply { steps += s }

    private fun listen(adapter: ListenerAdapter): ClusterSettingsBuilder = apply { listeners += adapter }
}
