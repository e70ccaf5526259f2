package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.HostNameResolver
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import io.ktor.network.sockets.InetSocketAddress
import io.ktor.network.sockets.Socket
import io.ktor.network.sockets.UnixSocketAddress
import io.ktor.network.sockets.aSocket
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.io.IOException
import java.net.InetAddress

/**
 * Opens TCP (TCP_NODELAY and SO_KEEPALIVE on) or Unix-domain sockets. DNS is resolved on
 * [Dispatchers.IO] (or by the connection's [HostNameResolver]), never on the caller's thread;
 * every resolved address is tried in order.
 * Stateless; thread-safe. Not bounded in time: the caller wraps it in connectTimeoutMS.
 */
internal object Connector {
    suspend fun connect(selector: SelectorManager, address: ServerAddress, resolver: HostNameResolver? = null): Socket {
        if (address.isUnixSocket) {
            return aSocket(selector).tcp().connect(UnixSocketAddress(address.host))
        }
        val ips = if (resolver == null || isIpLiteral(address.host)) {
            withContext(Dispatchers.IO) { InetAddress.getAllByName(address.host).toList() }
        } else {
            resolver.resolve(address.host)
        }
        var last: Exception? = null
        for (ip in ips) {
            try {
                return aSocket(selector).tcp().connect(InetSocketAddress(ip.hostAddress, address.port)) {
                    noDelay = true
                    keepAlive = true
                }
            } catch (e: IOException) {
                last = e
            }
        }
        throw last ?: IOException("no addresses for ${address.host}")
    }

    private val ipv4 = Regex("""^\d{1,3}(\.\d{1,3}){3}$""")

    /** IP literals never go to a [HostNameResolver] (getAllByName parses them without a lookup). */
    private fun isIpLiteral(host: String) = ':' in host || ipv4.matches(host)
}
