package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoCredential
import java.nio.ByteBuffer
import java.nio.CharBuffer
import java.nio.charset.StandardCharsets

/**
 * SASL PLAIN (RFC 4616, auth.md): one `saslStart` whose payload is `\0user\0password`. The
 * password crosses the wire as it is, so the factory builds this only over TLS unless the user
 * set [dev.mooring.cmap.ConnectionSettings.allowPlainAuthWithoutTls]. The payload is wiped after
 * sending. Stateless; thread-safe.
 */
internal class PlainAuthenticator(private val credential: MongoCredential) : MechanismAuthenticator {
    private val username: String = requireNotNull(credential.username) { "PLAIN needs a username" }

    init {
        require(credential.hasPassword) { "PLAIN needs a password" }
    }

    override val mechanismName: String get() = AuthMechanism.PLAIN.mechanismName

    override fun begin(): AuthSession = object : AuthSession {
        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
            authenticating(mechanismName, "user '$username' on database '${credential.source}'", connection) {
                val payload = payload()
                try {
                    SaslCommands.converse(connection, credential.source, mechanismName, payload, maxSteps = 1) {
                        throw AuthFailure("the server asked for more than the single PLAIN message")
                    }
                } finally {
                    payload.fill(0)
                }
            }
        }
    }

    /** `authzid \0 authcid \0 passwd` with an empty authzid, UTF-8. */
    private fun payload(): ByteArray {
        val password = credential.password ?: throw AuthFailure("PLAIN needs a password")
        val user = username.toByteArray(StandardCharsets.UTF_8)
        val encoded: ByteBuffer = StandardCharsets.UTF_8.encode(CharBuffer.wrap(password))
        password.fill('\u0000')
        val out = ByteArray(2 + user.size + encoded.remaining())
        System.arraycopy(user, 0, out, 1, user.size)
        encoded.get(out, 2 + user.size, encoded.remaining())
        if (encoded.hasArray()) encoded.array().fill(0)
        return out
    }

    override fun toString(): String = "PlainAuthenticator(credential=$credential)"
}
