package dev.mooring.java

import dev.mooring.sdam.TlsSettingsBuilder

/**
 * Java builder step for the TLS options, used inside [ClusterSettingsBuilder.applyToTlsSettings]
 * or [ConnectionOptionsBuilder.applyToTlsSettings]; applied in order over the current values at
 * build time, like the Kotlin DSL's `tls { }`. Not thread-safe: use it inside the callback.
 */
public class TlsOptionsBuilder {
    @get:JvmSynthetic
    internal val steps: MutableList<TlsSettingsBuilder.() -> Unit> = ArrayList()

    /** `tls`. */
    public fun enabled(value: Boolean): TlsOptionsBuilder = step { enabled = value }

    /** `tlsAllowInvalidCertificates`. */
    public fun allowInvalidCertificates(value: Boolean): TlsOptionsBuilder = step { allowInvalidCertificates = value }

    /** `tlsAllowInvalidHostnames`. */
    public fun allowInvalidHostnames(value: Boolean): TlsOptionsBuilder = step { allowInvalidHostnames = value }

    /** `tlsInsecure`. */
    public fun insecure(value: Boolean): TlsOptionsBuilder = step { insecure = value }

    /** `tlsCAFile`, or null. */
    public fun caFile(path: String?): TlsOptionsBuilder = step { caFile = path }

    /** `tlsCertificateKeyFile`, or null. */
    public fun certificateKeyFile(path: String?): TlsOptionsBuilder = step { certificateKeyFile = path }

    /** `tlsCertificateKeyFilePassword`, or null. */
    public fun certificateKeyFilePassword(password: String?): TlsOptionsBuilder = step { certificateKeyFilePassword = password }

    /** `tlsDisableOCSPEndpointCheck`. */
    public fun disableOcspEndpointCheck(value: Boolean): TlsOptionsBuilder = step { disableOcspEndpointCheck = value }

    /** `tlsDisableCertificateRevocationCheck`. */
    public fun disableCertificateRevocationCheck(value: Boolean): TlsOptionsBuilder = step { disableCertificateRevocationCheck = value }

    private fun step(s: TlsSettingsBuilder.() -> Unit): TlsOptionsBuilder = apply { steps += s }
}
