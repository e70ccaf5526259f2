package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionAuthenticator
import dev.mooring.cmap.ConnectionDescription
import org.bson.BsonDocument

/**
 * The client side of one authentication mechanism for one credential (auth.md), chosen by
 * [Authenticators.forCredential]. Thread-safe: one instance serves every pooled connection of a
 * factory; per-connection state lives in the [AuthSession] that [begin] returns. Failures are
 * [dev.mooring.cmap.MongoAuthenticationException]s naming [mechanismName], never a secret.
 */
internal sealed interface MechanismAuthenticator : ConnectionAuthenticator {
    /** The mechanism's wire name, for error messages. */
    val mechanismName: String

    /** A session for one new connection: its speculative first message (if any), then the conversation. */
    fun begin(): AuthSession

    override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
        begin().authenticate(connection, description)
    }
}

/**
 * One connection's authentication. Not thread-safe (used by the connection that establishes).
 * [speculativeCommand] is computed before the handshake is sent; [authenticate] runs after it.
 */
internal interface AuthSession {
    /**
     * The `speculativeAuthenticate` document for the handshake (handshake.md), or null when the
     * mechanism does not authenticate speculatively.
     */
    fun speculativeCommand(): BsonDocument? = null

    /**
     * Finishes authentication over [connection]: continues the speculative conversation when
     * the handshake reply in [description] answered it, else runs the whole conversation.
     */
    suspend fun authenticate(connection: Connection, description: ConnectionDescription)
}
