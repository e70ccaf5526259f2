package dev.mooring.cmap.internal.auth.oidc

import dev.mooring.cmap.IdpInfo
import dev.mooring.cmap.OidcCredential
import kotlinx.coroutines.delay
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock

/**
 * auth.md's Client Cache for one cluster: the latest access token and, for the human workflow,
 * the refresh token and [IdpInfo]. Calls to the token source are serialized by [sourceLock]
 * (never held during a SASL round trip) and spaced at least [MIN_CALL_INTERVAL_NANOS] apart.
 * Thread-safe: fields are guarded by [lock] (a JVM monitor held only for field updates).
 */
internal class OidcTokenCache {
    private val lock = Any()
    private val sourceLock = Mutex()
    private var accessToken: String? = null
    private var refreshToken: String? = null
    private var idpInfo: IdpInfo? = null
    private var lastCallNanos: Long? = null

    fun accessToken(): String? = synchronized(lock) { accessToken }
    fun refreshToken(): String? = synchronized(lock) { refreshToken }
    fun idpInfo(): IdpInfo? = synchronized(lock) { idpInfo }

    /** Clears the access token only if it is still [token] (auth.md "invalidate"). */
    fun invalidate(token: String?) {
        if (token == null) return
        synchronized(lock) { if (accessToken == token) accessToken = null }
    }

    fun clearRefreshToken() = synchronized(lock) { refreshToken = null }

    /** Replaces the access token (tests of the prose suite poison the cache this way too). */
    fun putAccessToken(token: String?) = synchronized(lock) { accessToken = token }

    /**
     * Read-through: returns the cached access token (`fromCache` true) unless it is [unless] or
     * absent, else calls [source] (one caller at a time, spaced) and caches its result.
     */
    suspend fun get(idp: IdpInfo?, source: suspend (refresh: String?) -> OidcCredential, useRefresh: Boolean = false): Pair<String, Boolean> =
        sourceLock.withLock {
            accessToken()?.let { return@withLock it to true }
            val credential = call(if (useRefresh) refreshToken() else null, source)
            synchronized(lock) {
                accessToken = credential.accessToken
                if (idp != null) idpInfo = idp
                if (credential.refreshToken != null || idp != null) refreshToken = credential.refreshToken
            }
            credential.accessToken to false
        }

    private suspend fun call(refresh: String?, source: suspend (String?) -> OidcCredential): OidcCredential {
        val last = synchronized(lock) { lastCallNanos }
        if (last != null) {
            val wait = MIN_CALL_INTERVAL_NANOS - (System.nanoTime() - last)
            if (wait > 0) delay((wait + 999_999) / 1_000_000)
        }
        try {
            return source(refresh)
        } finally {
            synchronized(lock) { lastCallNanos = System.nanoTime() }
        }
    }

    companion object {
        /** auth.md: at least 100 ms between two calls of the token source. */
        const val MIN_CALL_INTERVAL_NANOS = 100_000_000L
    }
}
