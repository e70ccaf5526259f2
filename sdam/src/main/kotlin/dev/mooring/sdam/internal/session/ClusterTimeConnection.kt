package dev.mooring.sdam.internal.session

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoCommandException
import org.bson.BsonDocument

/**
 * [connection] gossiping the cluster time (driver-sessions.md "Gossipping the cluster time"):
 * each command is sent with the higher of the [cluster]'s and the explicit [session]'s cluster
 * times as `$clusterTime`, once one was seen (a deployment that never reports cluster times, a
 * standalone, is never sent one; a command that carries its own `$clusterTime` is sent as given),
 * and the `$clusterTime` of every reply, `ok: 0` ones included, advances both clocks. Only
 * operation connections are wrapped: monitors' and handshakes' hellos (SDAM commands) neither
 * send nor advance cluster times. Same concurrency contract as the wrapped connection.
 */
internal class ClusterTimeConnection(
    private val connection: Connection,
    private val cluster: ClusterClock,
    private val session: ClusterClock?,
) : Connection by connection {
    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        gossiped(command, cluster, session) { connection.command(database, it) }

    companion object {
        const val FIELD = "\$clusterTime"

        /**
         * The one home of the gossip: [send]s [command] with the cluster time ([withClusterTime])
         * and advances the clocks from the reply's, an `ok: 0` reply's too ([observe]). The wrapper
         * calls it, and so does runCommand's path inline (no wrapper object, no frame of its own).
         */
        suspend inline fun gossiped(command: BsonDocument, cluster: ClusterClock, session: ClusterClock?, send: (BsonDocument) -> BsonDocument): BsonDocument {
            val reply = try {
                send(withClusterTime(command, cluster, session))
            } catch (e: MongoCommandException) {
                observe(e.response, cluster, session)
                throw e
            }
            observe(reply, cluster, session)
            return reply
        }

        /** [command] with the higher of [cluster]'s and [session]'s cluster times as `$clusterTime` (see the class KDoc), or as given. */
        fun withClusterTime(command: BsonDocument, cluster: ClusterClock, session: ClusterClock?): BsonDocument {
            if (command.containsKey(FIELD)) return command
            val time = ClusterClock.higher(cluster.current, session?.current) ?: return command
            return AppendedCommand.append(command, FIELD, time)
        }

        /** Advances [cluster] and [session] to the `$clusterTime` of [reply] (an `ok: 0` reply too). */
        fun observe(reply: BsonDocument, cluster: ClusterClock, session: ClusterClock?) {
            session?.observed(reply)
            val time = reply[FIELD] ?: return
            cluster.advance(time)
            session?.advance(time)
        }
    }
}
