package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoCredential
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * MONGODB-X509 (auth.md): the TLS client certificate proves the identity; the `authenticate`
 * command names the user only when the application gave one (else the server takes the
 * certificate's subject). Sent speculatively in the handshake; when the handshake reply carries
 * `speculativeAuthenticate`, no further command is needed. Stateless; thread-safe.
 */
internal class X509Authenticator(private val credential: MongoCredential) : MechanismAuthenticator {
    override val mechanismName: String get() = AuthMechanism.MONGODB_X509.mechanismName

    private val who: String = credential.username?.let { "user '$it'" } ?: "the certificate's subject"

    /** `{authenticate: 1, mechanism: "MONGODB-X509", user?}`. */
    private fun command(): BsonDocument = BsonDocument("authenticate", BsonInt32(1))
        .append("mechanism", BsonString(mechanismName))
        .also { doc -> credential.username?.let { doc.append("user", BsonString(it)) } }

    override fun begin(): AuthSession = object : AuthSession {
        override fun speculativeCommand(): BsonDocument = command().append("db", BsonString(credential.source))

        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
            if (description.helloReply["speculativeAuthenticate"] is BsonDocument) return
            authenticating(mechanismName, who, connection) { connection.command(credential.source, command()) }
        }
    }

    override fun toString(): String = "X509Authenticator(credential=$credential)"
}
