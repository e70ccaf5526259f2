package dev.mooring.cmap.internal.auth.gssapi

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.internal.auth.AuthFailure
import dev.mooring.cmap.internal.auth.AuthMechanism
import dev.mooring.cmap.internal.auth.AuthSession
import dev.mooring.cmap.internal.auth.SaslCommands
import dev.mooring.cmap.internal.auth.authenticating
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import javax.security.sasl.Sasl
import javax.security.sasl.SaslClient
import javax.security.sasl.SaslException

/**
 * The GSSAPI (Kerberos) conversation of auth.md through a [SaslClient] from [clients]: the
 * service principal is `SERVICE_NAME` at `SERVICE_HOST`, else at the connection's host
 * canonicalized per `CANONICALIZE_HOST_NAME`, in `SERVICE_REALM` when given. The SaslClient's
 * initial response goes in `saslStart`, each server payload is evaluated into the next
 * `saslContinue`, until the server says done. Thread-safe: a new SaslClient per connection.
 */
internal class GssapiConversation(
    private val credential: MongoCredential,
    private val clients: GssapiClientFactory,
    private val canonicalizer: HostCanonicalizer,
) {
    private val username: String = requireNotNull(credential.username?.takeIf { it.isNotEmpty() }) { "GSSAPI needs a username" }
    private val serviceName: String = credential.mechanismProperties["SERVICE_NAME"]?.toString() ?: "mongodb"
    private val serviceHost: String? = credential.mechanismProperties["SERVICE_HOST"]?.toString()
    private val serviceRealm: String? = credential.mechanismProperties["SERVICE_REALM"]?.toString()
    private val canonicalization = Canonicalization.of(credential.mechanismProperties["CANONICALIZE_HOST_NAME"])
    private val mechanismName = AuthMechanism.GSSAPI.mechanismName

    /** The session for one connection. */
    val session: AuthSession = object : AuthSession {
        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
            authenticating(mechanismName, "user '$username'", connection) { run(connection) }
        }
    }

    /** The SASL server name for [host]: SERVICE_HOST or the canonicalized host, then `@SERVICE_REALM`. */
    suspend fun serverName(host: String): String {
        val base = serviceHost ?: canonicalizer.canonicalize(host, canonicalization)
        return if (serviceRealm != null) "$base@$serviceRealm" else base
    }

    private suspend fun run(connection: Connection) {
        val host = connection.address.host
        val request = GssapiRequest(username, credential.password, serviceName, serverName(host), mapOf(Sasl.MAX_BUFFER to "0"))
        // JGSS may talk to the KDC (login, service ticket) and block: every call runs on Dispatchers.IO
        val client = try {
            withContext(Dispatchers.IO) { clients.create(request) }
        } catch (e: kotlinx.coroutines.CancellationException) {
            throw e
        } catch (e: AuthFailure) {
            throw e
        } catch (e: Exception) {
            throw AuthFailure("cannot start the Kerberos conversation: ${e.message ?: e.javaClass.simpleName}", e)
        } finally {
            request.password?.fill('\u0000')
        }
        try {
            val first = step { if (client.hasInitialResponse()) client.evaluateChallenge(ByteArray(0)) else ByteArray(0) }
            SaslCommands.converse(connection, credential.source, mechanismName, first) { challenge ->
                step { client.evaluateChallenge(challenge) }
            }
        } finally {
            try {
                client.dispose()
            } catch (_: SaslException) {
            }
        }
    }

    private suspend fun step(block: () -> ByteArray?): ByteArray = try {
        withContext(Dispatchers.IO) { block() } ?: ByteArray(0)
    } catch (e: SaslException) {
        throw AuthFailure("the Kerberos conversation failed: ${e.message ?: "SaslException"}", e)
    } catch (e: java.security.PrivilegedActionException) {
        throw AuthFailure("the Kerberos conversation failed: ${e.exception.message ?: e.exception.javaClass.simpleName}", e.exception)
    }
}
