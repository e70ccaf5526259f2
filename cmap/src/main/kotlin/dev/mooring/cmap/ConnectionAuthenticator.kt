package dev.mooring.cmap

/**
 * Authenticates a freshly handshaken connection (the auth spec's conversation), plugged into
 * [DefaultConnectionFactory]. Called once per pooled connection, after the handshake and within
 * the connectTimeoutMS bound, never for monitoring connections. Implementations must be
 * thread-safe (one instance serves every connection) and should throw [MongoCommandException]
 * or a [MongoServerException] subclass on failure; the connection is then closed.
 */
public fun interface ConnectionAuthenticator {
    /** Runs the conversation over [connection] using what the handshake returned in [description]. */
    public suspend fun authenticate(connection: Connection, description: ConnectionDescription)
}
