package dev.mooring.testkit.server

/**
 * What a handler knows about one request. Immutable snapshot.
 *
 * @property connectionNumber 1-based number of the server-side connection, in accept order
 *   (also the `connectionId` the default hello reports).
 * @property remotePort the client's ephemeral port.
 * @property viaOpQuery true when the request came as a legacy OP_QUERY.
 * @property appName `client.application.name` from this connection's handshake, if any.
 * @property requestId the request's requestId.
 * @property exhaustAllowed the request's exhaustAllowed flag (OP_MSG only).
 * @property commandName the first key of the command.
 * @property tls true when the connection runs over TLS.
 * @property peerCertificates the client's TLS certificate chain (leaf first), empty without one.
 */
data class RequestContext(
    val server: WireServer,
    val connectionNumber: Int,
    val remotePort: Int,
    val viaOpQuery: Boolean,
    val appName: String?,
    val requestId: Int,
    val exhaustAllowed: Boolean,
    val commandName: String,
    val tls: Boolean = false,
    val peerCertificates: List<java.security.cert.X509Certificate> = emptyList(),
)
