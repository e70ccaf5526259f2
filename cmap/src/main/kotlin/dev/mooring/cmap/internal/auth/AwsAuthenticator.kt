package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.internal.auth.aws.AwsConversation
import dev.mooring.cmap.internal.auth.aws.AwsCredentialChain
import java.time.ZoneOffset
import java.time.ZonedDateTime

/**
 * MONGODB-AWS (auth.md): credentials from [chain], then `saslStart` with the client nonce and
 * `saslContinue` with the signed GetCallerIdentity request. Any failure (refusal, network error,
 * cancellation) clears the credential cache. Thread-safe: a new [AwsConversation] per connection.
 */
internal class AwsAuthenticator(private val chain: AwsCredentialChain, private val source: String) : MechanismAuthenticator {
    override val mechanismName: String get() = AuthMechanism.MONGODB_AWS.mechanismName

    override fun begin(): AuthSession = object : AuthSession {
        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
            try {
                authenticating(mechanismName, "AWS credentials", connection) {
                    val credentials = chain.credentials()
                    val conversation = AwsConversation()
                    var sent = false
                    SaslCommands.converse(connection, source, mechanismName, conversation.clientFirst, maxSteps = 2) { serverFirst ->
                        if (sent) throw AuthFailure("the server asked for more than the client-second message")
                        sent = true
                        conversation.clientSecond(serverFirst, credentials, ZonedDateTime.now(ZoneOffset.UTC))
                    }
                }
            } catch (e: Throwable) {
                // auth.md "Caching Credentials": "If AWS authentication fails for any reason, the cache
                // MUST be cleared" (a refusal, a network error mid-conversation, a cancellation alike)
                chain.forget()
                throw e
            }
        }
    }

    override fun toString(): String = "AwsAuthenticator(source=$source)"
}
