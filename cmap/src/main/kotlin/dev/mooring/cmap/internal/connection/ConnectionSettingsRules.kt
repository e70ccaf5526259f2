package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.internal.wire.compression.Compressors
import dev.mooring.events.InternalMooringApi

/**
 * Not API ([InternalMooringApi], for `sdam`'s settings validation): the one home of the rules a
 * [ConnectionSettings] must satisfy (uri-options.md ranges, OP_COMPRESSED.md's compressor names,
 * handshake.md's application name limit) and of the connection options Mooring parses but cannot
 * honour. [DefaultConnectionFactory] applies both when it is created; `sdam` applies them when a
 * cluster's settings are built, so a rule is written once whichever way settings arrive. Stateless.
 */
@InternalMooringApi
public object ConnectionSettingsRules {
    /** The compressors the wire protocol defines and Mooring implements (OP_COMPRESSED.md), in the handshake's spelling. */
    public val COMPRESSORS: List<String> get() = Compressors.NAMES

    /** The handshake's limit on the application name, in UTF-8 bytes (handshake.md). */
    public const val MAX_APP_NAME_BYTES: Int = ClientMetadata.MAX_APP_NAME_BYTES

    /** Null when [c] is valid, else the first broken rule (credentials are checked by their own rules). */
    public fun check(c: ConnectionSettings): String? = when {
        c.connectTimeoutMS < 0 -> "connectTimeoutMS must be >= 0, was ${c.connectTimeoutMS}"
        c.socketTimeoutMS < 0 -> "socketTimeoutMS must be >= 0, was ${c.socketTimeoutMS}"
        c.zlibCompressionLevel !in -1..9 -> "zlibCompressionLevel must be in -1..9, was ${c.zlibCompressionLevel}"
        c.eventLoopThreads !in 1..DefaultConnectionFactory.MAX_EVENT_LOOPS ->
            "eventLoopThreads must be in 1..${DefaultConnectionFactory.MAX_EVENT_LOOPS}, was ${c.eventLoopThreads}"
        c.compressors.any { it !in COMPRESSORS } ->
            "compressors must be among ${COMPRESSORS.joinToString()}, got ${c.compressors.filter { it !in COMPRESSORS }}"
        c.compressors.toSet().size != c.compressors.size -> "compressors must not repeat a name"
        c.appName != null && c.appName!!.toByteArray(Charsets.UTF_8).size > MAX_APP_NAME_BYTES ->
            "appname must be at most $MAX_APP_NAME_BYTES bytes of UTF-8"
        else -> null
    }

    /**
     * The first option of [c] that Mooring parses but has no behaviour for, as an error message,
     * or null: refused where settings become connections, so none is accepted and then ignored.
     */
    public fun unhonoured(c: ConnectionSettings): String? = when {
        c.tls.disableOcspEndpointCheck ->
            "tlsDisableOCSPEndpointCheck=true is not supported: Mooring does not check certificate revocation " +
                "(no OCSP, stapled or from an endpoint, and no CRL), so there is no OCSP endpoint check to disable; remove the option"
        c.tls.disableCertificateRevocationCheck ->
            "tlsDisableCertificateRevocationCheck=true is not supported: Mooring does not check certificate revocation " +
                "(no OCSP, no CRL), so there is nothing to disable; remove the option"
        else -> null
    }
}
