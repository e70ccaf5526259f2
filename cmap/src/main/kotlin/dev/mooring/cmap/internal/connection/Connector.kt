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
 * Opens TCP (TCP_NODELAY and SO_KEEPALIVE on) or Unix-domain sockets. Host names are resolved
 * on [Dispatchers.IO] (or by the connection's [HostNameResolver]), never on the caller's thread;
 * IP literals are only parsed, on the caller's thread. Every resolved address is tried in order.
 * Stateless; thread-safe. Not bounded in time: the caller wraps it in connectTimeoutMS.
 */
internal object Connector {
    suspend fun connect(selector: SelectorManager, address: ServerAddress, resolver: HostNameResolver? = null): Socket {
        if (address.isUnixSocket) {
            return releasingOnFailure(selector) { aSocket(selector).tcp().connect(UnixSocketAddress(address.host)) }
        }
        val ips = when {
            // parsed, not looked up: no hop to Dispatchers.IO (whose idle threads would make every
            // later dispatch on the shared scheduler pay for an unpark)
            isIpLiteral(address.host) -> InetAddress.getAllByName(address.host).toList()
            resolver != null -> resolver.resolve(address.host)
            else -> withContext(Dispatchers.IO) { InetAddress.getAllByName(address.host).toList() }
        }
        var last: Exception? = null
        for (ip in ips) {
            try {
                return releasingOnFailure(selector) {
                    aSocket(selector).tcp().connect(InetSocketAddress(ip.hostAddress, address.port)) {
                        noDelay = true
                        keepAlive = true
                    }
                }
            } catch (e: IOException) {
                last = e
            }
        }
        throw last ?: IOException("no addresses for ${address.host}")
    }

    /**
     * Runs [connect]; when it fails or is cancelled (a connectTimeoutMS, a closing pool), Ktor has
     * closed the socket's channel, but the channel is released only once a loop deregisters its
     * key: the loops are woken for that ([EventLoopGroup.deregisterCancelledKeys]).
     */
    private suspend inline fun releasingOnFailure(selector: SelectorManager, connect: () -> Socket): Socket {
        try {
            return connect()
        } catch (t: Throwable) {
            (selector as? EventLoopGroup)?.deregisterCancelledKeys()
            throw t
        }
    }

    private val ipv4 = Regex("""^\d{1,3}(\.\d{1,3}){3}$""")

    /**
     * IP literals are parsed on the caller's thread and never go to a [HostNameResolver]:
     * getAllByName parses them without a lookup (an IPv6 literal that does not parse fails with
     * UnknownHostException, also without a lookup). A dotted quad with an octet above 255 is not a
     * literal to getAllByName, so it takes the resolver path like any other name.
     */
    internal fun isIpLiteral(host: String): Boolean =
        ':' in host || (ipv4.matches(host) && host.split('.').all { it.toInt() <= 255 })
}
