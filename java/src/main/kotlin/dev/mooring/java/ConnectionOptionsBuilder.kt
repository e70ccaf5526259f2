package dev.mooring.java

import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.ServerApi
import dev.mooring.sdam.ConnectionSettingsBuilder
import java.util.function.Consumer

/**
 * Java builder step for how connections are opened (timeouts, app name, compressors, Stable
 * API, TLS), used inside [ClusterSettingsBuilder.applyToConnectionSettings]; applied in order
 * over the current values at build time, like the Kotlin DSL's `connection { }`. Not
 * thread-safe: use it inside the callback.
 */
public class ConnectionOptionsBuilder {
    @get:JvmSynthetic
    internal val steps: MutableList<ConnectionSettingsBuilder.() -> Unit> = ArrayList()

    /** `connectTimeoutMS`; 0 = no limit. */
    public fun connectTimeoutMS(value: Long): ConnectionOptionsBuilder = step { connectTimeoutMS = value }

    /** `socketTimeoutMS`; 0 = no limit. */
    public fun socketTimeoutMS(value: Long): ConnectionOptionsBuilder = step { socketTimeoutMS = value }

    /** `appname`, or null. */
    public fun appName(value: String?): ConnectionOptionsBuilder = step { appName = value }

    /** `compressors`, in preference order. */
    public fun compressors(vararg names: String): ConnectionOptionsBuilder = names.toList().let { list -> step { compressors = list } }

    /** `zlibCompressionLevel`. */
    public fun zlibCompressionLevel(value: Int): ConnectionOptionsBuilder = step { zlibCompressionLevel = value }

    /** The declared Stable API, or null. */
    public fun serverApi(value: ServerApi?): ConnectionOptionsBuilder = step { serverApi = value }

    /** The credential exactly as given (prefer [ClusterSettingsBuilder.credential] for auth.md's defaults). */
    public fun credential(value: MongoCredential?): ConnectionOptionsBuilder = step { credential = value }

    /**
     * Lets a PLAIN credential send its password over a connection without TLS (rejected at
     * construction otherwise); see `ConnectionSettings.allowPlainAuthWithoutTls`.
     */
    public fun allowPlainAuthWithoutTls(value: Boolean): ConnectionOptionsBuilder = step { allowPlainAuthWithoutTls = value }

    /** How many event loops the connections use (1..16, default one per core); see `ConnectionSettings.eventLoopThreads`. */
    public fun eventLoopThreads(value: Int): ConnectionOptionsBuilder = step { eventLoopThreads = value }

    /** Adjusts the TLS options. */
    public fun applyToTlsSettings(block: Consumer<TlsOptionsBuilder>): ConnectionOptionsBuilder {
        val tls = TlsOptionsBuilder().also { block.accept(it) }
        return step { tls { tls.steps.forEach { it() } } }
    }

    private fun step(s: ConnectionSettingsBuilder.() -> Unit): ConnectionOptionsBuilder = apply { steps += s }
}
