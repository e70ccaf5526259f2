package dev.mooring.sdam.internal.session

import dev.mooring.cmap.Connection
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyDescription
import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * `endSessions` when a cluster closes (driver-sessions.md "endSessions"): the pooled sessions'
 * ids in commands of at most [BATCH] ids, sent to the `admin` database of the primary when
 * there is one, else of any available secondary (any mongos, the load balancer, the standalone).
 * Errors are ignored. Stateless.
 */
internal object EndSessions {
    /** The most ids one `endSessions` command carries. */
    const val BATCH: Int = 10_000

    /** The server to send `endSessions` to in [topology], or null when none is available. */
    fun target(topology: TopologyDescription): ServerAddress? =
        topology.primary?.address ?: topology.servers.values.firstOrNull { it.type in TARGETS }?.address

    /** The `endSessions` commands for [sessions]. */
    fun commands(sessions: List<ServerSession>): List<BsonDocument> =
        sessions.chunked(BATCH).map { chunk -> BsonDocument("endSessions", BsonArray(chunk.map { it.lsid })) }

    /** Sends [commands] on [connection]; errors are ignored (the server times the sessions out). */
    suspend fun send(connection: Connection, commands: List<BsonDocument>) {
        for (command in commands) {
            try {
                connection.command("admin", command)
            } catch (e: kotlinx.coroutines.CancellationException) {
                throw e
            } catch (e: Exception) {
                if (connection.isClosed) return
            }
        }
    }

    private val TARGETS = setOf(ServerType.RS_SECONDARY, ServerType.MONGOS, ServerType.LOAD_BALANCER, ServerType.STANDALONE)
}
