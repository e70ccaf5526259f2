package dev.mooring.driver.internal

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference

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
 * The primary's [ServerLimits], learned once from a connection's handshake (a checkout through
 * [MongoCluster.withConnection], no command sent) and kept: the limits are a server build's
 * constants. Thread-safe: concurrent first calls may each check out a connection; one answer wins.
 */
internal class ServerLimitsCache {
    @Volatile private var known: ServerLimits? = null

    suspend fun get(cluster: MongoCluster, session: ClientSession?, timeoutMS: Long?): ServerLimits =
        known ?: cluster.withConnection(ReadPreference.PRIMARY, session, timeoutMS) { connection ->
            val d = connection.description
            if (d == null) {
                ServerLimits(
                    ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
                    ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
                    ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
                    0,
                )
            } else {
                ServerLimits(d.maxBsonObjectSize, d.maxMessageSizeBytes, d.maxWriteBatchSize, d.maxWireVersion)
            }
        }.also { known = it }
}
