package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.internal.auth.oidc.OidcAuthenticator
import org.bson.BsonDocument

/**
 * MONGODB-OIDC in the mechanism dispatch: each connection's [AuthSession] takes the cached
 * token for speculative authentication (if any) and then lets [oidc] finish; [reauthenticate]
 * serves auth.md's reauthentication on error 391. The mechanism itself lives in
 * [dev.mooring.cmap.internal.auth.oidc]. Thread-safe (one instance per factory holds the token cache).
 */
internal class OidcMechanism(private val oidc: OidcAuthenticator) : MechanismAuthenticator {
    override val mechanismName: String get() = OidcAuthenticator.MECHANISM

    override fun begin(): AuthSession = object : AuthSession {
        private val speculative = oidc.speculativeStart()

        override fun speculativeCommand(): BsonDocument? = speculative?.second

        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) =
            oidc.authenticate(connection, description, speculative?.first)
    }

    /** True for the human workflow, whose callback is not bounded by connectTimeoutMS (auth.md "OIDC Human Callback"). */
    val usesHumanCallback: Boolean get() = oidc.usesHumanCallback

    /** Reauthenticates [connection] (SASL only). */
    suspend fun reauthenticate(connection: Connection) = oidc.reauthenticate(connection)
}
