package dev.mooring.cmap

import kotlin.time.Duration

/**
 * A MONGODB-OIDC token source written by the application (auth.md "OIDC Callback"): returns an
 * access token for the machine workflow, or, given as [OidcCallback.HUMAN_PROPERTY], for the human
 * workflow (then it also receives the identity provider's [IdpInfo] and a cached refresh token).
 * Put it in the credential's mechanism properties under [MACHINE_PROPERTY] or [HUMAN_PROPERTY]
 * (the Kotlin DSL's `oidc { }` and the Java builder do that).
 *
 * Concurrency: Mooring calls it from one coroutine at a time per cluster (never concurrently with
 * itself), at least 100 ms apart, and caches what it returns; it is cancelled when
 * [OidcCallbackContext.timeout] passes (1 minute for the machine workflow, 5 minutes for the human
 * one) or the connection attempt is cancelled. A thrown exception, a `null` result or an empty
 * token fails the authentication with a [MongoAuthenticationException] naming MONGODB-OIDC.
 */
public fun interface OidcCallback {
    /** Returns a credential (access token, optional expiry and refresh token), or null for none. */
    public suspend fun onRequest(context: OidcCallbackContext): OidcCredential?

    /** Mechanism property names. */
    public companion object {
        /** The mechanism property holding a machine-workflow callback (`OIDC_CALLBACK`). */
        public const val MACHINE_PROPERTY: String = "OIDC_CALLBACK"

        /** The mechanism property holding a human-workflow callback (`OIDC_HUMAN_CALLBACK`). */
        public const val HUMAN_PROPERTY: String = "OIDC_HUMAN_CALLBACK"

        /** The mechanism property holding the human workflow's allowed hosts (`ALLOWED_HOSTS`, a `List<String>`). */
        public const val ALLOWED_HOSTS_PROPERTY: String = "ALLOWED_HOSTS"

        /** auth.md's default `ALLOWED_HOSTS`. */
        public val DEFAULT_ALLOWED_HOSTS: List<String> = listOf(
            "*.mongodb.net", "*.mongodb-qa.net", "*.mongodb-dev.net", "*.mongodbgov.net", "localhost", "127.0.0.1", "::1", "*.mongo.com",
        )
    }
}

/**
 * What an [OidcCallback] is told. Immutable; [toString] never shows the refresh token.
 */
public class OidcCallbackContext(
    /** How long the callback may take; it is cancelled after that. */
    public val timeout: Duration,
    /** The credential's username, or null. */
    public val username: String?,
    /** The callback API version (1). */
    public val version: Int,
    /** The identity provider the server named (human workflow only), or null. */
    public val idpInfo: IdpInfo?,
    refreshToken: String?,
) {
    private val refresh: String? = refreshToken

    /** [timeout] in milliseconds (for Java). */
    public val timeoutMillis: Long get() = timeout.inWholeMilliseconds

    /** The cached refresh token (human workflow, when the last callback returned one), or null. */
    public val refreshToken: String? get() = refresh

    override fun toString(): String =
        "OidcCallbackContext(timeout=$timeout, username=$username, version=$version, idpInfo=$idpInfo, refreshToken=${if (refresh != null) "<hidden>" else "null"})"
}

/** The identity provider information a server sends in the human workflow's first step. Immutable. */
public data class IdpInfo(
    /** The issuer URL. */
    val issuer: String,
    /** The client id to use with the issuer, or null (a machine IdP). */
    val clientId: String?,
    /** Additional scopes to request. */
    val requestScopes: List<String> = emptyList(),
)

/**
 * What an [OidcCallback] returns: an access token, its optional lifetime and, in the human
 * workflow, an optional refresh token. Immutable; [toString] never shows either token.
 *
 * @throws IllegalArgumentException when [expiresIn] is negative.
 */
public class OidcCredential(
    accessToken: String,
    /** How long the access token is valid, or null when unknown. */
    public val expiresIn: Duration? = null,
    refreshToken: String? = null,
) {
    private val access: String = accessToken
    private val refresh: String? = refreshToken

    init {
        require(expiresIn == null || !expiresIn.isNegative()) { "expiresIn must not be negative" }
    }

    /** The access token (a JWT, sent as is; Mooring never parses it). */
    public val accessToken: String get() = access

    /** The refresh token, or null. */
    public val refreshToken: String? get() = refresh

    /** For Java (whose callers cannot pass a Kotlin [Duration]). */
    public companion object {
        /** A credential whose token is valid for [expiresInSeconds] (null: unknown), with an optional [refreshToken]. */
        @JvmStatic
        @JvmOverloads
        public fun of(accessToken: String, expiresInSeconds: Long? = null, refreshToken: String? = null): OidcCredential =
            OidcCredential(accessToken, expiresInSeconds?.let { kotlin.time.Duration.parse("${it}s") }, refreshToken)
    }

    override fun toString(): String =
        "OidcCredential(accessToken=<hidden>, expiresIn=$expiresIn, refreshToken=${if (refresh != null) "<hidden>" else "null"})"
}
