package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.Connection
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.internal.session.ClusterTimeConnection
import dev.mooring.sdam.internal.topology.AttemptReply
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import dev.mooring.sdam.internal.topology.SelectedServer
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * One command on a server selected by read preference: `runCommand` (any command, writes
 * included: run-command.md selects by read preference too) and `runRetryableRead`
 * (retryable-reads.md, with a `RetryableRead` as [retry]). One pass per attempt: the runner
 * selects and checks out; the attempt adds `$readPreference` (for the topology type of the
 * description the selection used), the session's `lsid` and the timeout's `maxTimeMS`, sends
 * with the cluster time gossiped inline ([ClusterTimeConnection.gossiped]) and translates a timeout; the runner
 * classifies an error once, tells SDAM once (a reply's writeConcernError too, [AttemptReply.COMMAND])
 * and checks the connection in.
 */
internal object CommandOperation {
    suspend fun run(
        ctx: OperationContext,
        database: String,
        command: Bson,
        readPreference: ReadPreference,
        retry: OperationRetry,
        session: ClientSession?,
        timeoutMS: Long?,
        /** True for the generic runCommand (no afterClusterTime: [OperationSession]), false for a helper's command. */
        generic: Boolean = false,
    ): BsonDocument {
        val doc = ctx.checkCommand(database, command)
        val op = ctx.monitoredOperation()
        val timeout = ctx.operationTimeout(timeoutMS, session)
        val s = ctx.operationSession(session, generic)
        // in a transaction: the transaction's selection and read preference, no retry but server overload's
        val rp = if (s.inTransaction) ReadPreference.PRIMARY else readPreference
        val r = if (s.inTransaction) OperationRetry.withOverloadRetries(OperationRetry.NONE, retry.retriesOverload) else retry
        // An object rather than a lambda: a suspend lambda is allocated twice per operation (its
        // instance, then a copy of it as the coroutine that runs it).
        val attempt = object : suspend (SelectedServer, Connection) -> BsonDocument {
            override suspend fun invoke(selected: SelectedServer, connection: Connection): BsonDocument {
                val helperDoc = if (generic) doc else RawDataField.forConnection(doc, connection, selected.description.maxWireVersion)
                val sent = ReadPreferenceCommand.withReadPreference(s.attach(helperDoc, connection), rp, selected.topology.type, selected.description)
                val reply = try {
                    // the gossip inline, through its one home: no wrapper object and frame per command
                    ClusterTimeConnection.gossiped(timeout.withMaxTimeMS(sent, selected.description), ctx.clusterClock, s.clusterClock) {
                        ctx.ungossiped(connection, op, timeout).command(database, it)
                    }
                } catch (e: Throwable) {
                    s.onError(e)
                    throw timeout.translate(e)
                }
                return timeout.checkReply(reply)
            }
        }
        try {
            val selection = ctx.selection(s, readPreference)
            return s.onTransactionConnection { ctx.runner.run(selection, doc.firstKey, timeout.timeoutMS, r, AttemptReply.COMMAND, mayRunOnLoops = true, attempt) }
        } catch (e: Throwable) {
            throw s.failed(e)
        } finally {
            s.release()
        }
    }
}
