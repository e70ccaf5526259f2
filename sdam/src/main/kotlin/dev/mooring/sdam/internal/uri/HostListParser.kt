package dev.mooring.sdam.internal.uri

import dev.mooring.events.InvalidServerAddressException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.InvalidConnectionStringException

/**
 * Parses the comma-separated host list of a connection string: host names, IPv4, IPv6
 * literals in brackets, and percent-encoded Unix domain socket paths (a decoded host holding a
 * `/` is a socket path and must end in `.sock`). Ports must be 1..65535.
 *
 * When [echo] is false (the URI has user information), messages do not quote host text, so a
 * password that ended up there through a missing escape is never shown.
 */
internal object HostListParser {
    fun parse(raw: String, echo: Boolean): List<ServerAddress> {
        val segments = raw.split(',')
        return segments.map { parseOne(it, echo) }
    }

    private fun quote(text: String, echo: Boolean) = if (echo) " '$text'" else ""

    private fun parseOne(seg: String, echo: Boolean): ServerAddress {
        if (seg.isEmpty()) throw InvalidConnectionStringException("the host list contains an empty host")
        try {
            if (seg.startsWith("[")) return parseIpLiteral(seg, echo)
            if (seg.contains("%2f", ignoreCase = true)) {
                val path = PercentCodec.decode(seg, "host", echo)
                if (!path.endsWith(".sock")) {
                    throw InvalidConnectionStringException(
                        "unsupported host${quote(path, echo)}: a host containing '/' must be a Unix domain socket path ending in '.sock'",
                    )
                }
                return ServerAddress.unixSocket(path)
            }
            val colons = seg.count { it == ':' }
            if (colons > 1) {
                throw InvalidConnectionStringException(
                    "invalid host${quote(seg, echo)}: an IPv6 literal must be enclosed in brackets and a host takes at most one port",
                )
            }
            val hostRaw = if (colons == 1) seg.substring(0, seg.indexOf(':')) else seg
            val host = PercentCodec.decode(hostRaw, "host", echo)
            if (host.isEmpty()) throw InvalidConnectionStringException("the host list contains an empty host name")
            if (host.any { it.isWhitespace() || it.isISOControl() || it in "/?#@[]%" }) {
                throw InvalidConnectionStringException("invalid character in host${quote(host, echo)}")
            }
            val port = if (colons == 1) parsePort(seg.substring(seg.indexOf(':') + 1), seg, echo) else ServerAddress.DEFAULT_PORT
            return ServerAddress(host, port)
        } catch (e: InvalidServerAddressException) {
            throw InvalidConnectionStringException("invalid host${quote(seg, echo)}: ${if (echo) e.message else "not a valid address"}", e)
        }
    }

    private fun parseIpLiteral(seg: String, echo: Boolean): ServerAddress {
        val close = seg.indexOf(']')
        if (close < 0) throw InvalidConnectionStringException("unterminated IPv6 literal${quote(seg, echo)}")
        val literal = seg.substring(1, close)
        if (literal.isEmpty() || !literal.contains(':') || !literal.all { it in '0'..'9' || it in 'a'..'f' || it in 'A'..'F' || it == ':' || it == '.' }) {
            throw InvalidConnectionStringException("invalid IPv6 literal${quote(literal, echo)}")
        }
        val rest = seg.substring(close + 1)
        return when {
            rest.isEmpty() -> ServerAddress(literal)
            rest.startsWith(":") -> ServerAddress(literal, parsePort(rest.substring(1), seg, echo))
            else -> throw InvalidConnectionStringException("unexpected text after the IPv6 literal${quote(seg, echo)}")
        }
    }

    private fun parsePort(p: String, seg: String, echo: Boolean): Int {
        val n = if (p.isNotEmpty() && p.length <= 5 && p.all { it in '0'..'9' }) p.toInt() else -1
        if (n !in 1..65535) {
            throw InvalidConnectionStringException("invalid port${quote(p, echo)} in host${quote(seg, echo)}: a port must be an integer in 1..65535")
        }
        return n
    }
}
