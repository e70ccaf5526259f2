package dev.mooring.events

/**
 * The address of one MongoDB server: a host name, IPv4 or IPv6 literal with a port, or the
 * path of a Unix domain socket.
 *
 * Host names are normalized to lower case; IPv6 literals are stored without brackets and
 * formatted with them; the port defaults to [DEFAULT_PORT]. [parse] and [toString] round-trip.
 * Instances are immutable and safe to share between threads.
 */
public class ServerAddress private constructor(
    /** The host (lower case, IPv6 without brackets), or the socket path for a Unix domain socket. */
    public val host: String,
    /** The TCP port; [DEFAULT_PORT] unless given. Unused (always 0) for Unix domain sockets. */
    public val port: Int,
    /** True when [host] is the path of a Unix domain socket. */
    public val isUnixSocket: Boolean,
) : Comparable<ServerAddress> {

    /** Creates a TCP address; the host is normalized to lower case and IPv6 brackets are removed. */
    public constructor(host: String, port: Int = DEFAULT_PORT) : this(normalizeHost(host), checkPort(port), false)

    /** True when [host] is an IPv6 literal. */
    public val isIpv6Literal: Boolean get() = !isUnixSocket && host.contains(':')

    override fun equals(other: Any?): Boolean =
        other is ServerAddress && other.host == host && other.port == port && other.isUnixSocket == isUnixSocket

    override fun hashCode(): Int = host.hashCode() * 31 + port

    override fun compareTo(other: ServerAddress): Int = toString().compareTo(other.toString())

    /** `host:port`, `[ipv6]:port`, or the socket path. */
    override fun toString(): String = when {
        isUnixSocket -> host
        isIpv6Literal -> "[$host]:$port"
        else -> "$host:$port"
    }

    public companion object {
        /** The port MongoDB listens on unless told otherwise. */
        public const val DEFAULT_PORT: Int = 27017

        /** A Unix domain socket address for [path] (an absolute or relative path ending in `.sock`). */
        @JvmStatic
        public fun unixSocket(path: String): ServerAddress {
            if (path.isEmpty()) throw InvalidServerAddressException("empty Unix domain socket path")
            return ServerAddress(path, 0, true)
        }

        /**
         * Parses `host`, `host:port`, `[ipv6]`, `[ipv6]:port` or a Unix domain socket path
         * (anything that ends in `.sock`). Throws [InvalidServerAddressException] for anything else.
         */
        @JvmStatic
        public fun parse(text: String): ServerAddress {
            val s = text.trim()
            if (s.isEmpty()) throw InvalidServerAddressException("empty host")
            if (s.endsWith(".sock")) return unixSocket(s)
            if (s.startsWith("[")) {
                val close = s.indexOf(']')
                if (close < 0) throw InvalidServerAddressException("unterminated IPv6 literal in '$s'")
                val host = s.substring(1, close)
                if (host.isEmpty() || !host.contains(':')) {
                    throw InvalidServerAddressException("invalid IPv6 literal '$host'")
                }
                val rest = s.substring(close + 1)
                return when {
                    rest.isEmpty() -> ServerAddress(host)
                    rest.startsWith(":") -> ServerAddress(host, parsePort(rest.substring(1), s))
                    else -> throw InvalidServerAddressException("unexpected '$rest' after IPv6 literal in '$s'")
                }
            }
            val colons = s.count { it == ':' }
            return when (colons) {
                0 -> ServerAddress(s)
                1 -> {
                    val i = s.indexOf(':')
                    val host = s.substring(0, i)
                    if (host.isEmpty()) throw InvalidServerAddressException("empty host in '$s'")
                    ServerAddress(host, parsePort(s.substring(i + 1), s))
                }
                else -> throw InvalidServerAddressException("an IPv6 literal must be enclosed in brackets: '$s'")
            }
        }

        private fun parsePort(p: String, whole: String): Int {
            if (p.isEmpty() || !p.all { it in '0'..'9' } || p.length > 5) {
                throw InvalidServerAddressException("invalid port '$p' in '$whole'")
            }
            return checkPort(p.toInt())
        }

        private fun checkPort(port: Int): Int {
            if (port !in 1..65535) throw InvalidServerAddressException("port $port is out of range 1..65535")
            return port
        }

        private fun normalizeHost(host: String): String {
            val h = host.removePrefix("[").removeSuffix("]")
            if (h.isEmpty()) throw InvalidServerAddressException("empty host")
            if (h.any { it.isWhitespace() || it == '/' || it == '?' || it == '@' || it == ',' }) {
                throw InvalidServerAddressException("invalid character in host '$host'")
            }
            return h.lowercase()
        }
    }
}

/** A host string that is not a valid server address. */
public class InvalidServerAddressException(message: String) : MooringException(message)
