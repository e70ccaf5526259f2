package dev.mooring.sdam

import dev.mooring.events.InvalidServerAddressException
import dev.mooring.events.ServerAddress

/**
 * Where a cluster sends its DNS queries: the SRV and TXT lookups of a `mongodb+srv` seed list
 * (initial-dns-seedlist-discovery.md) and of SRV polling (polling-srv-records-for-mongos-discovery.md).
 *
 * With [nameServer] null (the default) the system's resolver configuration is used (the name
 * servers of `/etc/resolv.conf` or the platform's equivalent) and server host names are resolved
 * by the JVM as for any other connection. With a [nameServer] (`host:port`, UDP with TCP
 * fallback for truncated answers) every SRV and TXT query goes to it, and so do the A/AAAA
 * lookups of the servers' host names (the cluster's connections use it through
 * `ConnectionSettings.hostNameResolver`); a name it does not know (NXDOMAIN or no address record)
 * falls back to the JVM's resolver, so `localhost` and `/etc/hosts` entries keep working.
 *
 * Each query is bounded by [timeoutMS] and runs off the caller's thread. Immutable and
 * thread-safe. Invalid values throw [InvalidSettingsException].
 */
public data class DnsResolverSettings(
    /** The DNS server to query, or null for the system's configuration. Not a Unix socket. */
    val nameServer: ServerAddress? = null,
    /** Bound on each DNS query (all retries included), in milliseconds; positive. */
    val timeoutMS: Long = DEFAULT_TIMEOUT_MS,
) {
    init {
        if (nameServer != null && nameServer.isUnixSocket) throw InvalidSettingsException("the DNS name server must be host:port, not a socket path")
        if (timeoutMS <= 0) throw InvalidSettingsException("the DNS timeoutMS must be positive, was $timeoutMS")
    }

    public companion object {
        /** The default bound on one DNS query. */
        public const val DEFAULT_TIMEOUT_MS: Long = 10_000

        /** The system's resolver configuration. */
        @JvmField
        public val SYSTEM: DnsResolverSettings = DnsResolverSettings()

        /** Queries the DNS server at [hostAndPort] (`host:port`; port defaults to 53). Throws [InvalidSettingsException] for a malformed address. */
        @JvmStatic
        public fun of(hostAndPort: String): DnsResolverSettings {
            val address = try {
                val parsed = ServerAddress.parse(hostAndPort)
                if (parsed.isUnixSocket || hostAndPort.trimEnd().endsWith(":${parsed.port}")) parsed else ServerAddress(parsed.host, 53)
            } catch (e: InvalidServerAddressException) {
                throw InvalidSettingsException("invalid DNS name server '$hostAndPort': ${e.message}", e)
            }
            return DnsResolverSettings(address)
        }
    }
}
