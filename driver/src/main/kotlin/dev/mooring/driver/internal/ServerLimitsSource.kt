package dev.mooring.driver.internal

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.mapNotNull
import kotlinx.coroutines.withTimeoutOrNull

/**
 * What writes need to know of the server they go to: the hello reply's `maxBsonObjectSize`,
 * `maxMessageSizeBytes`, `maxWriteBatchSize` and `maxWireVersion`.
 */
internal data class ServerLimits(val maxBsonObjectSize: Int, val maxMessageSizeBytes: Int, val maxWriteBatchSize: Int, val maxWireVersion: Int) {
    /** The bytes of documents one write command may carry: its body must stay within both limits (the wire encoder's rule). */
    val maxBatchBytes: Int get() = minOf(maxBsonObjectSize, maxMessageSizeBytes - MESSAGE_RESERVE)

    /**
     * crud.md: a `hint` on an unacknowledged update, delete or findAndModify fails before anything
     * is sent when the server is older than 4.4 (wire version 9), which would ignore it silently.
     */
    fun checkUnacknowledgedHint(unacknowledged: Boolean, hasHint: Boolean) {
        require(!(unacknowledged && hasHint && maxWireVersion < WIRE_VERSION_4_4)) {
            "a hint cannot be used with an unacknowledged write (w: 0) on a server older than MongoDB 4.4 (wire version $maxWireVersion)"
        }
    }

    companion object {
        const val WIRE_VERSION_4_4 = 9

        /** Room kept in a message for the header, the command's own fields and the `documents` array's keys. */
        const val MESSAGE_RESERVE = 16 * 1024
    }
}

/**
 * The [ServerLimits] of the server writes go to, read from the topology the cluster's monitors keep
 * (the hello reply's limits in [ServerDescription]): no connection is checked out and no command
 * sent, so the write's own attempt is the only one that selects, checks out and may be retried.
 * When no writable server is known yet it waits for one (bounded by the operation's timeoutMS,
 * else serverSelectionTimeoutMS) and then takes the defaults a server reports, leaving the
 * write's own server selection to fail as it does. Stateless; thread-safe.
 */
internal class ServerLimitsSource {
    suspend fun get(cluster: MongoCluster, timeoutMS: Long?): ServerLimits {
        val bound = timeoutMS?.takeIf { it > 0 } ?: cluster.settings.serverSelectionTimeoutMS
        val server = writable(cluster.topology.value)
            ?: withTimeoutOrNull(bound) { cluster.topology.mapNotNull { writable(it) }.first() }
        return if (server == null) {
            ServerLimits(
                ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
                ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
                ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
                0,
            )
        } else {
            ServerLimits(server.maxBsonObjectSize, server.maxMessageSizeBytes, server.maxWriteBatchSize, server.maxWireVersion)
        }
    }

    /** A server writes may go to: the primary, a standalone, a mongos or the load balancer. */
    private fun writable(t: TopologyDescription): ServerDescription? = t.servers.values.firstOrNull {
        it.type == ServerType.RS_PRIMARY || it.type == ServerType.STANDALONE || it.type == ServerType.MONGOS || it.type == ServerType.LOAD_BALANCER
    }
}
