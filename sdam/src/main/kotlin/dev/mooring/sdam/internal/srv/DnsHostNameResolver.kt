package dev.mooring.sdam.internal.srv

import dev.mooring.cmap.HostNameResolver
import dev.mooring.sdam.DnsLookupException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.net.InetAddress
import java.net.UnknownHostException

/**
 * Resolves server host names through the cluster's configured DNS server (so the targets of
 * SRV records are reached at the addresses that server gives), falling back to the JVM's
 * resolver for names it does not know (`localhost`, `/etc/hosts`). A failing query is an
 * [UnknownHostException] (an I/O error for the pool and SDAM). Thread-safe; never blocks the
 * calling thread.
 */
internal class DnsHostNameResolver(private val dns: DnsClient) : HostNameResolver {
    override suspend fun resolve(host: String): List<InetAddress> {
        val found = try {
            dns.addresses(host)
        } catch (e: DnsLookupException) {
            throw UnknownHostException(e.message).apply { initCause(e) }
        }
        if (found.isNotEmpty()) return found
        return withContext(Dispatchers.IO) { InetAddress.getAllByName(host).toList() }
    }

    override fun toString(): String = "DnsHostNameResolver"
}
