package dev.mooring.cmap.internal.auth.aws

import java.util.concurrent.atomic.AtomicReference

/**
 * Credentials fetched from AWS endpoints (never those from environment variables), shared by
 * every client of the process as auth.md's cached-credentials tests expect. Written atomically;
 * nobody locks around a fetch (auth.md: no lock that would override maxConnecting). Thread-safe.
 */
internal class AwsCredentialCache {
    private val ref = AtomicReference<AwsCredentials?>(null)

    fun get(): AwsCredentials? = ref.get()

    fun set(credentials: AwsCredentials) = ref.set(credentials)

    /** auth.md: "If AWS authentication fails for any reason, the cache MUST be cleared." */
    fun clear() = ref.set(null)

    companion object {
        /** The process-wide cache. */
        val SHARED: AwsCredentialCache = AwsCredentialCache()
    }
}
