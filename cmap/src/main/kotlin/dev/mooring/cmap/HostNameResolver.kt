package dev.mooring.cmap

import java.net.InetAddress

/**
 * Resolves a server's host name to the IP addresses a connection tries, in order. Set one in
 * [ConnectionSettings.hostNameResolver] to replace the JVM's resolver (for example to resolve
 * through the DNS server configured for `mongodb+srv` lookups); null there means
 * `InetAddress.getAllByName` on `Dispatchers.IO`.
 *
 * Concurrency contract: implementations must be thread-safe and must not block the calling
 * thread (suspend instead, or move blocking work to `Dispatchers.IO`). [resolve] is called
 * inside the connection's connectTimeoutMS and must honour cancellation. It returns at least
 * one address or throws (`java.net.UnknownHostException` when the name has no address).
 */
public fun interface HostNameResolver {
    /** The addresses of [host] (a name, never an IP literal or a socket path), in the order to try. */
    public suspend fun resolve(host: String): List<InetAddress>
}
