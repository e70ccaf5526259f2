package dev.mooring.sdam.internal.session

import dev.mooring.cmap.Connection
import org.bson.BsonDocument

/**
 * [connection] whose commands carry [session]'s `lsid` (an explicit session given to
 * `withConnection`); network errors mark the session dirty. Same concurrency contract as the
 * wrapped connection.
 */
internal class SessionConnection(private val connection: Connection, private val session: OperationSession) : Connection by connection {
    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        try {
            connection.command(database, session.attach(command, connection))
        } catch (e: Throwable) {
            session.onError(e)
            throw e
        }
}
