package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoSocks5Exception
import dev.mooring.cmap.PoolErrorLabels
import java.net.UnknownHostException
import java.nio.channels.UnresolvedAddressException
import java.security.cert.CertificateException
import javax.net.ssl.SSLPeerUnverifiedException

/**
 * The CMAP "backpressure-enabled" rule: network errors and network timeouts met while
 * establishing a connection (TCP/TLS connect and the hello) get `SystemOverloadedError` and
 * `RetryableError`, so SDAM does not clear the pool for them. Errors that cannot come from an
 * overloaded server get no labels: DNS failures, certificate and hostname verification failures
 * (non-I/O TLS errors), failures during authentication after the hello ([helloCompleted]:
 * the connection already has its [dev.mooring.cmap.ConnectionDescription]), and every SOCKS5
 * failure ([MongoSocks5Exception]: proxy unreachable, handshake or proxy authentication refused),
 * which socks5.md says to treat "the same as a network error (e.g. `ECONNREFUSED`) which does not
 * indicate server overload for backpressure purposes".
 */
internal object BackpressureLabels {
    fun applyTo(error: Throwable, helloCompleted: Boolean) {
        if (error !is MongoNetworkException) return
        if (helloCompleted) return
        if (error is MongoSocks5Exception) return
        if (causedByNonOverload(error)) return
        error.addErrorLabel(PoolErrorLabels.SYSTEM_OVERLOADED_ERROR)
        error.addErrorLabel(PoolErrorLabels.RETRYABLE_ERROR)
    }

    private fun causedByNonOverload(error: Throwable): Boolean {
        var c: Throwable? = error.cause
        var depth = 0
        while (c != null && depth++ < 16) {
            if (c is UnknownHostException || c is UnresolvedAddressException ||
                c is CertificateException || c is SSLPeerUnverifiedException
            ) return true
            c = c.cause
        }
        return false
    }
}
