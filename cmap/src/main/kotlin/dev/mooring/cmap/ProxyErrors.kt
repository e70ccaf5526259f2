package dev.mooring.cmap

import dev.mooring.events.ServerAddress

/** Why a connection through a SOCKS5 proxy failed (see [MongoSocks5Exception]). */
public enum class Socks5Failure {
    /** The proxy itself could not be reached (refused, reset, DNS failure for the proxy's name). */
    PROXY_UNREACHABLE,

    /** The proxy accepts none of the authentication methods offered (reply method 0xFF). */
    NO_ACCEPTABLE_METHOD,

    /** The proxy rejected the username/password (RFC 1929 status other than 0). */
    AUTHENTICATION_FAILED,

    /** The proxy could not connect to the server; [MongoSocks5Exception.replyCode] holds RFC 1928's REP code. */
    CONNECT_FAILED,

    /** The proxy broke the protocol (wrong version, unexpected method, malformed reply, closed mid-handshake). */
    PROTOCOL_ERROR,
}

/**
 * Opening a connection through the SOCKS5 proxy failed: the proxy was unreachable, refused the
 * offered authentication methods or the credentials, could not reach the server, or broke the
 * protocol ([failure] says which; [replyCode] is the proxy's REP code for [Socks5Failure.CONNECT_FAILED]).
 * socks5.md treats it as a network error (it is a [MongoNetworkException], before the handshake
 * completes), so SDAM marks the server Unknown and clears its pool. [address] is the server the
 * connection was for; the message names the proxy ([proxy], `host:port`) and never the proxy
 * password. Immutable.
 */
public class MongoSocks5Exception(
    message: String,
    address: ServerAddress,
    generation: Int?,
    /** The proxy as `host:port`. */
    public val proxy: String,
    /** What went wrong. */
    public val failure: Socks5Failure,
    /** RFC 1928's REP code for [Socks5Failure.CONNECT_FAILED], else null. */
    public val replyCode: Int? = null,
    cause: Throwable? = null,
) : MongoNetworkException(message, address, generation, handshakeCompleted = false, cause = cause)
