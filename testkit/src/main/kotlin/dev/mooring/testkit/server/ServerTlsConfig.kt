package dev.mooring.testkit.server

import javax.net.ssl.SSLContext
import javax.net.ssl.SSLEngine

/**
 * Makes a [WireServer] terminate TLS: every accepted connection runs a server-side TLS
 * handshake with [sslContext] before any MongoDB message. With [needClientAuth] the client must
 * present a certificate the context trusts; with [wantClientAuth] it may present one. Immutable.
 */
class ServerTlsConfig(val sslContext: SSLContext, val needClientAuth: Boolean = false, val wantClientAuth: Boolean = false) {
    /** A server-mode engine for one accepted connection. */
    fun newEngine(): SSLEngine = sslContext.createSSLEngine().apply {
        useClientMode = false
        if (this@ServerTlsConfig.needClientAuth) needClientAuth = true else if (this@ServerTlsConfig.wantClientAuth) wantClientAuth = true
    }
}
