package dev.mooring.cmap.internal.auth.oidc

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionAuthenticator
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.IdpInfo
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.OidcCallback
import dev.mooring.cmap.OidcCallbackContext
import dev.mooring.cmap.OidcCredential
import dev.mooring.cmap.internal.auth.AuthFailure
import dev.mooring.cmap.internal.auth.OperationDeadline
import dev.mooring.cmap.internal.auth.authenticating
import dev.mooring.cmap.internal.connection.EstablishmentDeadline
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.withTimeout
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.Collections
import java.util.WeakHashMap
import kotlin.time.Duration
import kotlin.time.Duration.Companion.minutes

/**
 * MONGODB-OIDC (auth.md) for one credential and one cluster: the machine workflow (a built-in
 * `ENVIRONMENT` or an [OidcCallback]) and the human workflow (a human callback, refresh tokens,
 * `ALLOWED_HOSTS`), the Client Cache ([cache]) and the Connection Cache ([connectionTokens]),
 * speculative authentication and reauthentication. Thread-safe: one instance serves every pooled
 * connection of a factory. Every failure is a [MongoAuthenticationException] naming MONGODB-OIDC;
 * no message holds a token.
 */
internal class OidcAuthenticator(private val credential: MongoCredential) : ConnectionAuthenticator {
    private val human: OidcCallback? = credential.mechanismProperties[OidcCallback.HUMAN_PROPERTY] as? OidcCallback
    private val machine: OidcCallback = (credential.mechanismProperties[OidcCallback.MACHINE_PROPERTY] as? OidcCallback)
        ?: credential.mechanismProperties["ENVIRONMENT"]?.toString()?.let {
            OidcEnvironments.callback(it, credential.mechanismProperties["TOKEN_RESOURCE"]?.toString(), credential.username)
        }
        ?: human
        ?: throw IllegalArgumentException("MONGODB-OIDC needs the ENVIRONMENT mechanism property, an OIDC_CALLBACK or an OIDC_HUMAN_CALLBACK")
    private val allowedHosts: List<String> = allowedHosts(credential.mechanismProperties[OidcCallback.ALLOWED_HOSTS_PROPERTY])

    init {
        require(credential.mechanismProperties[OidcCallback.MACHINE_PROPERTY].let { it == null || it is OidcCallback }) { "OIDC_CALLBACK must be an OidcCallback" }
        require(credential.mechanismProperties[OidcCallback.HUMAN_PROPERTY].let { it == null || it is OidcCallback }) { "OIDC_HUMAN_CALLBACK must be an OidcCallback" }
    }

    /** The Client Cache (internal: the prose tests poison it). */
    val cache = OidcTokenCache()

    /** The Connection Cache: the token each live connection authenticated with. */
    private val connectionTokens: MutableMap<Connection, String> = Collections.synchronizedMap(WeakHashMap())

    /**
     * The cached token and the `speculativeAuthenticate` document for a new connection's hello,
     * or null without a cached token (auth.md: no speculation then).
     */
    fun speculativeStart(): Pair<String, BsonDocument>? {
        val token = cache.accessToken() ?: return null
        return token to saslStart(jwt(token)).append("db", BsonString(EXTERNAL))
    }

    override suspend fun authenticate(connection: Connection, description: ConnectionDescription) =
        authenticate(connection, description, speculativeToken = null)

    /**
     * Authenticates a new connection. When its hello carried [speculativeToken] and the server
     * accepted it, nothing more is sent; otherwise the standard conversation runs (a failed
     * speculation invalidates nothing, auth.md).
     */
    suspend fun authenticate(connection: Connection, description: ConnectionDescription, speculativeToken: String?) {
        if (speculativeToken != null) {
            val spec = description.helloReply["speculativeAuthenticate"] as? BsonDocument
            if (spec != null && spec["done"]?.let { it.isBoolean && it.asBoolean().value } == true) {
                connectionTokens[connection] = speculativeToken
                return
            }
        }
        guard(connection) { if (human != null) humanAuth(connection, human) else machineAuth(connection) }
    }

    /** Reauthenticates [connection] after ReauthenticationRequired (391): invalidate its token, then authenticate without hello. */
    suspend fun reauthenticate(connection: Connection) {
        cache.invalidate(connectionTokens.remove(connection))
        guard(connection) { if (human != null) humanAuth(connection, human) else machineAuth(connection) }
    }

    /** True for the human workflow (an OIDC_HUMAN_CALLBACK): its callback may take 5 minutes whatever connectTimeoutMS is. */
    val usesHumanCallback: Boolean get() = human != null

    private suspend fun machineAuth(connection: Connection) {
        val (token, cached) = cache.get(null, { fetch(connection, machine, null, null, machineLimit()) })
        if (!cached) return oneStep(connection, token)
        if (acceptedOneStep(connection, token)) return
        cache.invalidate(token)
        oneStep(connection, cache.get(null, { fetch(connection, machine, null, null, machineLimit()) }).first)
    }

    /**
     * auth.md "OIDC Callback": the machine callback's timeout is `min(remaining connectTimeoutMS,
     * remaining timeoutMS)`, 1 minute when CSOT is not applied. A connection being established
     * ([EstablishmentDeadline] in the context) gives it the remaining connectTimeoutMS (the
     * establishment runs in the pool, under no operation's timeoutMS); a reauthentication for an
     * operation with a timeoutMS deadline ([OperationDeadline]) the remaining timeoutMS; otherwise
     * (nothing bounds the call: connectTimeoutMS=0, or a reauthentication without timeoutMS) 1 minute.
     */
    private suspend fun machineLimit(): CallbackLimit {
        val context = currentCoroutineContext()
        context[EstablishmentDeadline]?.let { return CallbackLimit.Establishment(it) }
        context[OperationDeadline]?.let { return CallbackLimit.Operation(it) }
        return CallbackLimit.Fixed(MACHINE_TIMEOUT)
    }

    private suspend fun humanAuth(connection: Connection, callback: OidcCallback) {
        checkAllowed(connection)
        while (true) {
            val cached = cache.accessToken()
            if (cached != null) {
                if (acceptedOneStep(connection, cached)) return
                cache.invalidate(cached)
                connectionTokens.remove(connection)
                continue
            }
            val idp = cache.idpInfo()
            if (cache.refreshToken() != null && idp != null) {
                val (token, _) = waitingForHuman {
                    cache.get(idp, { refresh -> fetch(connection, callback, idp, refresh, CallbackLimit.Fixed(HUMAN_TIMEOUT)) }, useRefresh = true)
                }
                if (acceptedOneStep(connection, token)) return
                cache.clearRefreshToken()
                cache.invalidate(token)
                connectionTokens.remove(connection)
                continue
            }
            return twoStep(connection, callback)
        }
    }

    /**
     * Runs [block], which calls the human callback or waits for another connection's call of it
     * (the cache serializes them). auth.md "OIDC Human Callback": the callback has 5 minutes and
     * "is not subject to CSOT", so on a connection being established that time does not count
     * against connectTimeoutMS ([EstablishmentDeadline.excluding]), which still bounds the round trips.
     */
    private suspend fun <T> waitingForHuman(block: suspend () -> T): T {
        val deadline = currentCoroutineContext()[EstablishmentDeadline] ?: return block()
        return deadline.excluding(block)
    }

    /** A one-step conversation with [token]; false when the server rejected the token (18), other errors thrown. */
    private suspend fun acceptedOneStep(connection: Connection, token: String): Boolean =
        try {
            oneStep(connection, token)
            true
        } catch (e: MongoCommandException) {
            if (e.code != AUTHENTICATION_FAILED) throw e
            false
        }

    private suspend fun twoStep(connection: Connection, callback: OidcCallback) {
        val principal = BsonDocument().also { d -> credential.username?.let { d["n"] = BsonString(it) } }
        val first = connection.command(EXTERNAL, saslStart(principal))
        val idp = parseIdpInfo(first)
        // a new two-step conversation never passes a cached refresh token (fetch gets null)
        val (token, _) = waitingForHuman { cache.get(idp, { fetch(connection, callback, idp, null, CallbackLimit.Fixed(HUMAN_TIMEOUT)) }) }
        connectionTokens[connection] = token
        val reply = connection.command(
            EXTERNAL,
            BsonDocument("saslContinue", BsonInt32(1)).append("conversationId", first["conversationId"] ?: BsonInt32(1)).append("payload", payloadOf(jwt(token))),
        )
        checkDone(reply)
    }

    private suspend fun oneStep(connection: Connection, token: String) {
        connectionTokens[connection] = token
        checkDone(connection.command(EXTERNAL, saslStart(jwt(token))))
    }

    private fun checkDone(reply: BsonDocument) {
        if (reply["done"]?.let { it.isBoolean && it.asBoolean().value } != true) throw AuthFailure("the server did not finish the conversation")
    }

    /**
     * Calls [callback] with [limit]'s timeout and cancels it after that: past a fixed limit that is
     * an [AuthFailure]; past the establishment's deadline it is the connection's timeout
     * ([MongoNetworkTimeoutException], as when a round trip runs out of connectTimeoutMS).
     */
    private suspend fun fetch(connection: Connection, callback: OidcCallback, idp: IdpInfo?, refresh: String?, limit: CallbackLimit): OidcCredential {
        val timeout = limit.timeout()
        val context = OidcCallbackContext(timeout, credential.username, CALLBACK_VERSION, idp, refresh)
        val result = try {
            // an operation's deadline is enforced by the operation's own bound (its timeout error)
            if (limit is CallbackLimit.Operation) callback.onRequest(context) else withTimeout(timeout) { callback.onRequest(context) }
        } catch (e: TimeoutCancellationException) {
            // only our own limit is a callback failure; an enclosing bound (connectTimeoutMS around
            // the handshake) or a cancellation of the caller must reach its owner unchanged
            if (!currentCoroutineContext().isActive) throw e
            when (limit) {
                is CallbackLimit.Fixed, is CallbackLimit.Operation -> throw AuthFailure("the OIDC callback did not return within $timeout", e)
                is CallbackLimit.Establishment -> throw MongoNetworkTimeoutException(
                    "timed out after connectTimeoutMS=${limit.deadline.connectTimeoutMS} ms establishing on ${connection.address}: " +
                        "the $MECHANISM callback did not return within the remaining $timeout",
                    connection.address, connection.generation, false, e,
                )
            }
        } catch (e: CancellationException) {
            throw e
        } catch (e: AuthFailure) {
            throw e
        } catch (e: Exception) {
            throw AuthFailure("the OIDC callback failed: ${e.javaClass.simpleName}${e.message?.let { ": $it" } ?: ""}", e)
        }
        if (result == null) throw AuthFailure("the OIDC callback returned null")
        if (result.accessToken.isEmpty()) throw AuthFailure("the OIDC callback returned an empty access token")
        return result
    }

    private fun checkAllowed(connection: Connection) {
        val host = connection.address.host
        val ok = allowedHosts.any { pattern ->
            if (pattern.startsWith("*.")) host.endsWith(pattern.substring(1), ignoreCase = true) else host.equals(pattern, ignoreCase = true)
        }
        if (!ok) {
            throw MongoAuthenticationException(
                "MONGODB-OIDC: host '$host' is not in ALLOWED_HOSTS ${allowedHosts}; the human callback was not called",
                connection.address, connection.generation,
            )
        }
    }

    /** Runs [block]; failures become [MongoAuthenticationException]s naming MONGODB-OIDC (see [authenticating]). */
    private suspend fun guard(connection: Connection, block: suspend () -> Unit) {
        val who = credential.username?.let { "user '$it'" } ?: "the OIDC identity"
        try {
            authenticating(MECHANISM, who, connection, block)
        } catch (e: MongoAuthenticationException) {
            connectionTokens.remove(connection)
            throw e
        }
    }

    private fun parseIdpInfo(reply: BsonDocument): IdpInfo {
        val payload = reply["payload"]?.takeIf { it.isBinary }?.asBinary()?.data ?: throw AuthFailure("saslStart reply without IdpInfo payload")
        val doc = try {
            org.bson.RawBsonDocument(payload).decode(org.bson.codecs.BsonDocumentCodec())
        } catch (e: Exception) {
            throw AuthFailure("the IdpInfo payload is not BSON")
        }
        val issuer = doc["issuer"]?.takeIf { it.isString }?.asString()?.value ?: throw AuthFailure("IdpInfo without issuer")
        val clientId = doc["clientId"]?.takeIf { it.isString }?.asString()?.value
        val scopes = doc["requestScopes"]?.takeIf { it.isArray }?.asArray()?.mapNotNull { v -> v.takeIf { it.isString }?.asString()?.value }.orEmpty()
        return IdpInfo(issuer, clientId, scopes)
    }

    private fun jwt(token: String) = BsonDocument("jwt", BsonString(token))

    private fun saslStart(payload: BsonDocument) =
        BsonDocument("saslStart", BsonInt32(1)).append("mechanism", BsonString(MECHANISM)).append("payload", payloadOf(payload))

    private fun payloadOf(doc: BsonDocument): BsonBinary {
        val out = org.bson.io.BasicOutputBuffer()
        org.bson.codecs.BsonDocumentCodec().encode(org.bson.BsonBinaryWriter(out), doc, org.bson.codecs.EncoderContext.builder().build())
        return BsonBinary(out.toByteArray())
    }

    override fun toString(): String = "OidcAuthenticator(username=${credential.username}, human=${human != null})"

    companion object {
        const val MECHANISM = "MONGODB-OIDC"
        const val EXTERNAL = "\$external"
        const val CALLBACK_VERSION = 1
        const val AUTHENTICATION_FAILED = 18
        val MACHINE_TIMEOUT: Duration = 1.minutes
        val HUMAN_TIMEOUT: Duration = 5.minutes

        private fun allowedHosts(value: Any?): List<String> = when (value) {
            null -> OidcCallback.DEFAULT_ALLOWED_HOSTS
            is List<*> -> value.map { it.toString() }
            else -> throw IllegalArgumentException("ALLOWED_HOSTS must be a List<String> given in the settings, never in the connection string")
        }
    }
}
