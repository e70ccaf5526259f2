package dev.mooring.testkit.server.auth.oidc

import java.security.SecureRandom
import java.util.Base64
import java.util.concurrent.ConcurrentHashMap

/**
 * A test identity provider: issues access tokens (JWT-shaped strings, opaque to the client) and
 * refresh tokens for users, remembers who each was issued to and until when, and validates them.
 * [expire] and [expireAll] end tokens early (a server then answers 391 ReauthenticationRequired on
 * connections that authenticated with them). Thread-safe.
 */
class OidcIdentityProvider(
    /** The issuer URL the server reports in IdpInfo. */
    val issuer: String = "https://idp.test.invalid",
    /** The client id the server reports in IdpInfo, or null (a machine IdP). */
    val clientId: String? = "mooring-test-client",
    /** The scopes the server reports in IdpInfo. */
    val requestScopes: List<String> = listOf("openid"),
) {
    private class Issued(val user: String, val expiresAtMillis: Long)

    private val random = SecureRandom()
    private val access = ConcurrentHashMap<String, Issued>()
    private val refresh = ConcurrentHashMap<String, String>()

    /** A new access token for [user], valid for [lifetimeMillis]. */
    fun issue(user: String, lifetimeMillis: Long = 3_600_000): String {
        val enc = Base64.getUrlEncoder().withoutPadding()
        val header = enc.encodeToString("""{"alg":"none","typ":"JWT"}""".toByteArray())
        val expires = System.currentTimeMillis() + lifetimeMillis
        val body = enc.encodeToString("""{"sub":"$user","iss":"$issuer","exp":${expires / 1000}}""".toByteArray())
        val token = "$header.$body.${enc.encodeToString(ByteArray(16).also { random.nextBytes(it) })}"
        access[token] = Issued(user, expires)
        return token
    }

    /** A new refresh token for [user]. */
    fun issueRefresh(user: String): String = "refresh-" + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(ByteArray(16).also { random.nextBytes(it) }).also { refresh["refresh-$it"] = user }

    /** The user a valid refresh token belongs to, or null. */
    fun refreshUser(token: String?): String? = token?.let { refresh[it] }

    /** The user [token] was issued to when it is known and not expired, else null. */
    fun validate(token: String): String? {
        val issued = access[token] ?: return null
        return if (System.currentTimeMillis() < issued.expiresAtMillis) issued.user else null
    }

    /** Ends [token] now. */
    fun expire(token: String) {
        access.computeIfPresent(token) { _, i -> Issued(i.user, 0) }
    }

    /** Ends every token issued so far. */
    fun expireAll() {
        access.keys.toList().forEach { expire(it) }
    }
}
