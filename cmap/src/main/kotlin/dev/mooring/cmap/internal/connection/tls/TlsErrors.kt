package dev.mooring.cmap.internal.connection.tls

import java.security.cert.CertPathValidatorException
import java.security.cert.CertificateException
import javax.net.ssl.SSLException
import javax.net.ssl.SSLHandshakeException

/** Turns JSSE exceptions into short, clear reasons. Stateless; thread-safe. */
internal object TlsErrors {
    /** A reason such as "certificate not trusted" or "host name mismatch", with JSSE's own detail. */
    fun describe(e: Throwable): String {
        val chain = generateSequence(e) { it.cause }.take(10).toList()
        val messages = chain.mapNotNull { it.message }.joinToString(" / ")
        val certificate = chain.firstOrNull { it is CertificateException || it is CertPathValidatorException }
        return when {
            certificate != null && (
                messages.contains("No name matching", ignoreCase = true) ||
                    messages.contains("No subject alternative", ignoreCase = true)
                ) -> "host name mismatch: ${certificate.message}"
            certificate != null || messages.contains("PKIX path", ignoreCase = true) ->
                "certificate not trusted: ${certificate?.message ?: messages}"
            messages.contains("bad_certificate") || messages.contains("certificate_required") || messages.contains("Empty client certificate") ->
                "the server rejected the client certificate (or none was sent): ${e.message}"
            e is SSLHandshakeException -> "TLS handshake failed: ${e.message}"
            e is SSLException -> "TLS error: ${e.message}"
            else -> "TLS error: ${e.message ?: e.javaClass.simpleName}"
        }
    }
}
