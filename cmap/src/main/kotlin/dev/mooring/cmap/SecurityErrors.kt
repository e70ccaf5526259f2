package dev.mooring.cmap

import dev.mooring.events.ServerAddress

/**
 * Authentication of a new pooled connection failed: the server rejected the credential
 * (wrong password, unknown user), could not prove it knows the password (bad server signature),
 * broke the SASL conversation, or the credential cannot be used (for example a mechanism
 * Mooring does not implement). It always happens before the handshake completes
 * ([handshakeCompleted] is false), carries the connection's [generation], and the connection
 * is closed. The message never contains the password. [serverCode] is the server's error code
 * when the server refused (18 = AuthenticationFailed), else null. Immutable.
 */
public class MongoAuthenticationException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
    /** The server's error code when the server refused the conversation, else null. */
    public val serverCode: Int? = null,
    cause: Throwable? = null,
) : MongoServerException(message, address, generation, handshakeCompleted = false, cause = cause)

/**
 * The TLS handshake failed or TLS broke the connection: the server's certificate is not trusted,
 * its host name does not match, the server demanded a client certificate, or the peers share no
 * protocol. The message says which ("certificate not trusted", "host name mismatch"); it never
 * contains key passwords. The connection is closed. Immutable.
 */
public class MongoTlsException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
    handshakeCompleted: Boolean = false,
    cause: Throwable? = null,
) : MongoNetworkException(message, address, generation, handshakeCompleted, cause)
