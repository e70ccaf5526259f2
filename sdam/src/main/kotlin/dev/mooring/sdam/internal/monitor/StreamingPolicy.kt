package dev.mooring.sdam.internal.monitor

import dev.mooring.sdam.ServerMonitoringMode
import org.bson.BsonDocument

/**
 * Whether a monitor may use the streaming protocol (server-monitoring.md "Streaming disabled").
 * Internal API, not stable. Pure and thread-safe.
 */
internal object StreamingPolicy {
    /**
     * True for [ServerMonitoringMode.STREAM]; false for [ServerMonitoringMode.POLL]; for
     * [ServerMonitoringMode.AUTO], true unless the handshake's [clientMetadata] names a FaaS
     * platform in `env.name` (the handshake spec's `client.env` detection, which the spec says
     * the monitor must reuse). Whether the server supports streaming is decided per check.
     */
    internal fun streamingEnabled(mode: ServerMonitoringMode, clientMetadata: BsonDocument): Boolean = when (mode) {
        ServerMonitoringMode.STREAM -> true
        ServerMonitoringMode.POLL -> false
        ServerMonitoringMode.AUTO -> !isFaas(clientMetadata)
    }

    /** True when [clientMetadata]'s `env.name` is one of the handshake spec's FaaS names. */
    internal fun isFaas(clientMetadata: BsonDocument): Boolean {
        val env = clientMetadata["env"] as? BsonDocument ?: return false
        val name = env["name"]?.takeIf { it.isString }?.asString()?.value ?: return false
        return name in FAAS_NAMES
    }

    private val FAAS_NAMES = setOf("aws.lambda", "azure.func", "gcp.func", "vercel")
}
