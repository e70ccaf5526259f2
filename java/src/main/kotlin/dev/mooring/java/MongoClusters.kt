package dev.mooring.java

import dev.mooring.events.EventBus
import dev.mooring.java.internal.DefaultJavaMongoCluster
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings

/**
 * The Java entry point: creates [JavaMongoCluster]s and settings builders. All methods are
 * static from Java (`MongoClusters.create(uri)`) and thread-safe. The cluster's monitors connect
 * in the background; the only I/O on the calling thread is the DNS lookup of a `mongodb+srv`
 * seed list (as the Kotlin `MongoCluster` factory functions do).
 */
public object MongoClusters {
    /**
     * A cluster for the connection string [uri], created exactly as the Kotlin
     * `MongoCluster(uri)` is (for `mongodb+srv`: the URI's options win over the TXT record's).
     * Throws `InvalidConnectionStringException` for a malformed URI or SRV/TXT answers that
     * break the seedlist rules, [dev.mooring.sdam.DnsLookupException] when a DNS query fails,
     * and [dev.mooring.sdam.InvalidSettingsException] for settings the specs forbid.
     */
    @JvmStatic
    public fun create(uri: String): JavaMongoCluster = create(uri, DnsResolverSettings.SYSTEM)

    /**
     * A cluster for the connection string [uri] whose DNS queries (`mongodb+srv`) go to
     * [dnsResolver], created exactly as the Kotlin `MongoCluster(uri, dnsResolver)` is. Errors
     * as for [create] with a URI.
     */
    @JvmStatic
    public fun create(uri: String, dnsResolver: DnsResolverSettings): JavaMongoCluster =
        DefaultJavaMongoCluster({ listeners -> MongoCluster(uri, dnsResolver, listeners) }, emptyList(), EventBus.DEFAULT_BUFFER_CAPACITY)

    /** A cluster for [settings] (from a URI, the Kotlin DSL or [settingsBuilder]), with no listeners yet. */
    @JvmStatic
    public fun create(settings: MongoClusterSettings): JavaMongoCluster =
        DefaultJavaMongoCluster(settings, emptyList(), EventBus.DEFAULT_BUFFER_CAPACITY)

    /**
     * A cluster for the settings [builder] builds, whose listeners are registered before
     * anything is published (so they see the opening events). Throws
     * [dev.mooring.sdam.InvalidSettingsException] for invalid settings.
     */
    @JvmStatic
    public fun create(builder: ClusterSettingsBuilder): JavaMongoCluster =
        DefaultJavaMongoCluster(builder.build(), builder.listenerAdapters(), builder.eventBufferCapacity())

    /** A new settings builder starting from the defaults. */
    @JvmStatic
    public fun settingsBuilder(): ClusterSettingsBuilder = ClusterSettingsBuilder()

    /** A new settings builder starting from the connection string [uri] (validated at build). */
    @JvmStatic
    public fun settingsBuilder(uri: String): ClusterSettingsBuilder = ClusterSettingsBuilder().applyConnectionString(uri)

    /** A new settings builder starting from every field of [settings]. */
    @JvmStatic
    public fun settingsBuilder(settings: MongoClusterSettings): ClusterSettingsBuilder = ClusterSettingsBuilder().applySettings(settings)
}
