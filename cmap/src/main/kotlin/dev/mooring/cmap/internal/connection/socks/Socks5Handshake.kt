package dev.mooring.cmap.internal.connection.socks

import dev.mooring.cmap.MongoSocks5Exception
import dev.mooring.cmap.ProxySettings
import dev.mooring.cmap.Socks5Failure
import dev.mooring.cmap.internal.connection.Connector
import dev.mooring.events.ServerAddress
import java.io.ByteArrayOutputStream
import java.io.EOFException
import java.io.IOException
import java.net.InetAddress

/** The plain byte stream to the proxy, before TLS starts. */
internal interface Socks5Io {
    suspend fun write(bytes: ByteArray)
    suspend fun readFully(dst: ByteArray)
}

/**
 * The client side of a SOCKS5 handshake (RFC 1928, with RFC 1929 username/password): method
 * negotiation, optional authentication, then CONNECT to [target]. Host names go to the proxy
 * unresolved (ATYP 3), IP literals as IPv4 (ATYP 1) or IPv6 (ATYP 4) addresses. Every failure is
 * a [MongoSocks5Exception] naming the proxy, never its password. Stateless; one call per
 * connection, bounded by the caller's connectTimeoutMS.
 */
internal class Socks5Handshake(private val proxy: ProxySettings, private val target: ServerAddress, private val generation: Int?) {

    suspend fun run(io: Socks5Io) {
        try {
            negotiate(io)
            connect(io)
        } catch (e: EOFException) {
            throw fail(Socks5Failure.PROTOCOL_ERROR, "the proxy closed the connection during the SOCKS5 handshake", cause = e)
        } catch (e: IOException) {
            throw fail(Socks5Failure.PROTOCOL_ERROR, "I/O error during the SOCKS5 handshake: ${e.message ?: e.javaClass.simpleName}", cause = e)
        }
    }

    private suspend fun negotiate(io: Socks5Io) {
        val withAuth = proxy.username != null
        io.write(if (withAuth) byteArrayOf(VERSION, 2, NO_AUTH, USER_PASS) else byteArrayOf(VERSION, 1, NO_AUTH))
        val reply = ByteArray(2).also { io.readFully(it) }
        checkVersion(reply[0])
        when (reply[1]) {
            NO_AUTH -> Unit
            USER_PASS -> if (withAuth) authenticate(io) else {
                throw fail(Socks5Failure.PROTOCOL_ERROR, "the proxy chose username/password authentication, which was not offered (no proxyUsername)")
            }
            NO_ACCEPTABLE -> throw fail(
                Socks5Failure.NO_ACCEPTABLE_METHOD,
                if (withAuth) "the proxy accepts neither no authentication nor username/password"
                else "the proxy requires authentication (set proxyUsername and proxyPassword)",
            )
            else -> throw fail(Socks5Failure.PROTOCOL_ERROR, "the proxy chose authentication method ${reply[1].toInt() and 0xFF}, which was not offered")
        }
    }

    private suspend fun authenticate(io: Socks5Io) {
        val user = proxy.username!!.toByteArray(Charsets.UTF_8)
        val pass = proxy.password!!.toByteArray(Charsets.UTF_8)
        val out = ByteArrayOutputStream(3 + user.size + pass.size)
        out.write(AUTH_VERSION.toInt())
        out.write(user.size); out.write(user)
        out.write(pass.size); out.write(pass)
        val request = out.toByteArray()
        try {
            io.write(request)
        } finally {
            request.fill(0)
            pass.fill(0)
        }
        val reply = ByteArray(2).also { io.readFully(it) }
        if (reply[0] != AUTH_VERSION) throw fail(Socks5Failure.PROTOCOL_ERROR, "bad username/password reply version ${reply[0]}")
        if (reply[1] != 0.toByte()) {
            throw fail(Socks5Failure.AUTHENTICATION_FAILED, "the proxy rejected the username/password of proxy user '${proxy.username}'")
        }
    }

    private suspend fun connect(io: Socks5Io) {
        val out = ByteArrayOutputStream(22)
        out.write(byteArrayOf(VERSION, CMD_CONNECT, 0))
        val host = target.host
        if (Connector.isIpLiteral(host)) {
            val ip = InetAddress.getByName(host).address // parses, never looks up
            out.write(if (ip.size == 4) ATYP_IPV4.toInt() else ATYP_IPV6.toInt())
            out.write(ip)
        } else {
            val name = host.toByteArray(Charsets.US_ASCII.takeIf { c -> host.all { it.code < 128 } } ?: Charsets.UTF_8)
            if (name.size > 255) throw fail(Socks5Failure.PROTOCOL_ERROR, "host name longer than 255 bytes cannot be sent to a SOCKS5 proxy")
            out.write(ATYP_DOMAIN.toInt())
            out.write(name.size)
            out.write(name)
        }
        out.write(target.port ushr 8 and 0xFF)
        out.write(target.port and 0xFF)
        io.write(out.toByteArray())

        val head = ByteArray(4).also { io.readFully(it) }
        checkVersion(head[0])
        val rep = head[1].toInt() and 0xFF
        if (rep != 0) {
            throw fail(Socks5Failure.CONNECT_FAILED, "the proxy could not connect to $target: ${replyText(rep)} (reply code $rep)", rep)
        }
        val addressLength = when (head[3]) {
            ATYP_IPV4 -> 4
            ATYP_IPV6 -> 16
            ATYP_DOMAIN -> ByteArray(1).also { io.readFully(it) }[0].toInt() and 0xFF
            else -> throw fail(Socks5Failure.PROTOCOL_ERROR, "bad address type ${head[3]} in the proxy's reply")
        }
        io.readFully(ByteArray(addressLength + 2)) // BND.ADDR and BND.PORT: not used
    }

    private fun checkVersion(v: Byte) {
        if (v != VERSION) throw fail(Socks5Failure.PROTOCOL_ERROR, "the proxy answered with SOCKS version ${v.toInt() and 0xFF}, expected 5")
    }

    private fun fail(failure: Socks5Failure, why: String, replyCode: Int? = null, cause: Throwable? = null) =
        MongoSocks5Exception("SOCKS5 proxy ${proxy.endpoint} for $target: $why", target, generation, proxy.endpoint, failure, replyCode, cause)

    internal companion object {
        const val VERSION: Byte = 5
        const val NO_AUTH: Byte = 0
        const val USER_PASS: Byte = 2
        const val NO_ACCEPTABLE: Byte = 0xFF.toByte()
        const val AUTH_VERSION: Byte = 1
        const val CMD_CONNECT: Byte = 1
        const val ATYP_IPV4: Byte = 1
        const val ATYP_DOMAIN: Byte = 3
        const val ATYP_IPV6: Byte = 4

        /** RFC 1928 section 6's reply texts. */
        fun replyText(rep: Int): String = when (rep) {
            1 -> "general SOCKS server failure"
            2 -> "connection not allowed by ruleset"
            3 -> "network unreachable"
            4 -> "host unreachable"
            5 -> "connection refused"
            6 -> "TTL expired"
            7 -> "command not supported"
            8 -> "address type not supported"
            else -> "unassigned reply code"
        }

        /** Connects to the proxy itself; an I/O failure becomes [Socks5Failure.PROXY_UNREACHABLE]. */
        suspend fun <T> reachProxy(proxy: ProxySettings, target: ServerAddress, generation: Int?, open: suspend (ServerAddress) -> T): T =
            try {
                open(ServerAddress(proxy.host, proxy.port))
            } catch (e: IOException) {
                throw MongoSocks5Exception(
                    "SOCKS5 proxy ${proxy.endpoint} for $target: cannot connect to the proxy: ${e.message ?: e.javaClass.simpleName}",
                    target, generation, proxy.endpoint, Socks5Failure.PROXY_UNREACHABLE, null, e,
                )
            }
    }
}
