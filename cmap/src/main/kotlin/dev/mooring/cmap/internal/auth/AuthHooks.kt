package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.internal.auth.aws.AwsCredentialCache
import dev.mooring.cmap.internal.auth.aws.AwsEndpoints
import dev.mooring.cmap.internal.auth.gssapi.GssapiClientFactory
import dev.mooring.cmap.internal.auth.gssapi.HostLookups
import dev.mooring.cmap.internal.auth.gssapi.JdkGssapiClientFactory
import dev.mooring.cmap.internal.auth.gssapi.JdkHostLookups
import java.time.Instant

/**
 * What the mechanisms take from the outside world: environment variables, AWS endpoints and
 * credential cache, the clock, the GSSAPI SASL client factory and DNS lookups. [DEFAULT] is the
 * real world; tests replace parts to run everything on loopback. Not public API. Immutable.
 */
internal data class AuthHooks(
    val environment: (String) -> String? = System::getenv,
    val awsEndpoints: AwsEndpoints = AwsEndpoints(),
    val awsCache: AwsCredentialCache = AwsCredentialCache.SHARED,
    val clock: () -> Instant = Instant::now,
    val gssapiClients: GssapiClientFactory = JdkGssapiClientFactory,
    val hostLookups: HostLookups = JdkHostLookups,
) {
    companion object {
        val DEFAULT: AuthHooks = AuthHooks()
    }
}
