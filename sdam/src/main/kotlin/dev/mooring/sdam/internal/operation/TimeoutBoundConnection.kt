package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.Connection
import dev.mooring.cmap.internal.connection.OperationSocketTimeout
import kotlinx.coroutines.withContext
import org.bson.BsonDocument

/**
 * [delegate] as an operation under timeoutMS uses it: its commands run without socketTimeoutMS
 * ([OperationSocketTimeout]), which client-side-operations-timeout.md says to ignore when
 * timeoutMS is set; the operation's deadline bounds them. The one place every operation path
 * applies that rule ([OperationContext.ungossiped]). Confined to its operation.
 */
internal class TimeoutBoundConnection(private val delegate: Connection) : Connection by delegate {
    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        withContext(OperationSocketTimeout) { delegate.command(database, command) }
}
