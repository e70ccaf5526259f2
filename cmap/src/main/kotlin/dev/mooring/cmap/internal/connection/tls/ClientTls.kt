package dev.mooring.cmap.internal.connection.tls

import dev.mooring.cmap.TlsSettings
import dev.mooring.events.ServerAddress
import java.net.Socket
import java.security.KeyStore
import java.security.SecureRandom
import java.security.cert.X509Certificate
import javax.net.ssl.KeyManager
import javax.net.ssl.KeyManagerFactory
import javax.net.ssl.SSLContext
import javax.net.ssl.SSLEngine
import javax.net.ssl.TrustManager
import javax.net.ssl.TrustManagerFactory
import javax.net.ssl.X509ExtendedTrustManager

/**
 * The client side of TLS for one factory: the [SSLContext] (the user's, or one built from
 * tlsCAFile / tlsCertificateKeyFile / tlsAllowInvalidCertificates) and a configured
 * [SSLEngine] per connection. Host names are verified (`endpointIdentificationAlgorithm =
 * HTTPS`) unless tlsAllowInvalidHostnames. Immutable after construction; thread-safe.
 * Construction reads the PEM files (blocking) and throws [IllegalArgumentException] for bad ones.
 */
internal class ClientTls(private val settings: TlsSettings) {
    private val context: SSLContext = settings.sslContext ?: buildContext()

    /** A client-mode engine for [address], with SNI and (unless disabled) host name verification. */
    fun newEngine(address: ServerAddress): SSLEngine {
        val engine = context.createSSLEngine(address.host, address.port)
        engine.useClientMode = true
        val params = engine.sslParameters
        if (!settings.allowInvalidHostnames) params.endpointIdentificationAlgorithm = "HTTPS"
        engine.sslParameters = params
        return engine
    }

    private fun buildContext(): SSLContext {
        val trust: Array<TrustManager>? = when {
            settings.allowInvalidCertificates -> arrayOf(TrustEverything)
            settings.caFile != null -> {
                val store = KeyStore.getInstance(KeyStore.getDefaultType()).apply { load(null, null) }
                PemFiles.certificates(settings.caFile).forEachIndexed { i, c -> store.setCertificateEntry("ca-$i", c) }
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm()).apply { init(store) }.trustManagers
            }
            else -> null
        }
        val keys: Array<KeyManager>? = settings.certificateKeyFile?.let { file ->
            val chain = PemFiles.certificates(file)
            val password = settings.certificateKeyFilePassword?.toCharArray()
            try {
                val key = PemFiles.privateKey(file, password, chain.first())
                val storePassword = CharArray(0)
                val store = KeyStore.getInstance("PKCS12").apply { load(null, null) }
                store.setKeyEntry("client", key, storePassword, chain.toTypedArray())
                KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm()).apply { init(store, storePassword) }.keyManagers
            } finally {
                password?.fill('\u0000')
            }
        }
        return SSLContext.getInstance("TLS").apply { init(keys, trust, SecureRandom()) }
    }

    /** tlsAllowInvalidCertificates: accepts any server certificate (and so any host name). */
    private object TrustEverything : X509ExtendedTrustManager() {
        override fun checkClientTrusted(chain: Array<out X509Certificate>?, authType: String?) = Unit
        override fun checkClientTrusted(chain: Array<out X509Certificate>?, authType: String?, socket: Socket?) = Unit
        override fun checkClientTrusted(chain: Array<out X509Certificate>?, authType: String?, engine: SSLEngine?) = Unit
        override fun checkServerTrusted(chain: Array<out X509Certificate>?, authType: String?) = Unit
        override fun checkServerTrusted(chain: Array<out X509Certificate>?, authType: String?, socket: Socket?) = Unit
        override fun checkServerTrusted(chain: Array<out X509Certificate>?, authType: String?, engine: SSLEngine?) = Unit
        override fun getAcceptedIssuers(): Array<X509Certificate> = emptyArray()
    }
}
