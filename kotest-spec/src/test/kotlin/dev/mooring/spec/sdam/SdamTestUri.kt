package dev.mooring.spec.sdam

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.TopologySettings

/**
 * The few parts of a `mongodb://` URI the SDAM JSON tests use (seeds, directConnection,
 * replicaSet, loadBalanced, heartbeatFrequencyMS). Connection-string parsing proper is another
 * module's job; this reader exists so the runners do not depend on it.
 */
internal data class SdamTestUri(val settings: TopologySettings, val heartbeatFrequencyMS: Long?) {
    companion object {
        fun parse(uri: String): SdamTestUri {
            require(uri.startsWith("mongodb://")) { "not a mongodb:// URI: $uri" }
            val rest = uri.removePrefix("mongodb://")
            val slash = rest.indexOf('/')
            val hostPart = if (slash >= 0) rest.substring(0, slash) else rest.substringBefore('?')
            val query = rest.substringAfter('?', "")
            val options = query.split('&').filter { it.isNotEmpty() }.associate {
                it.substringBefore('=').lowercase() to it.substringAfter('=', "")
            }
            val seeds = hostPart.split(',').filter { it.isNotEmpty() }.map { ServerAddress.parse(it) }
            val settings = TopologySettings(
                seeds = seeds,
                directConnection = options["directconnection"]?.toBooleanStrict(),
                replicaSetName = options["replicaset"],
                loadBalanced = options["loadbalanced"]?.toBooleanStrict() ?: false,
            )
            return SdamTestUri(settings, options["heartbeatfrequencyms"]?.toLong())
        }
    }
}
