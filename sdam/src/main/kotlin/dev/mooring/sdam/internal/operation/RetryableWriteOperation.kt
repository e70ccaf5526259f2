package dev.mooring.sdam.internal.operation

import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.internal.retry.DefaultWriteConcern
import dev.mooring.sdam.internal.retry.RetryableWrite
import dev.mooring.sdam.internal.retry.RetryableWriteConcernReply
import dev.mooring.sdam.internal.topology.AttemptReply
import dev.mooring.sdam.internal.topology.OperationRetry
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * A write command on the primary (or a mongos) as a retryable write (retryable-writes.md): the
 * cluster's write concern applied when the command has none, the policy and the `lsid` /
 * `txnNumber` of each attempt from [RetryableWrite], one pass per attempt through the runner.
 * A reply with a retryable writeConcernError that the retry did not replace is returned, not thrown.
 */
internal object RetryableWriteOperation {
    suspend fun run(ctx: OperationContext, database: String, command: Bson, session: ClientSession?, timeoutMS: Long?): BsonDocument {
        val checked = ctx.checkCommand(database, command)
        require(!checked.containsKey("lsid") && !checked.containsKey("txnNumber")) { "a retryable write's command must not carry lsid or txnNumber" }
        val doc = DefaultWriteConcern.applyTo(checked, ctx.settings.writeConcern, (timeoutMS ?: ctx.settings.timeoutMS) != null)
        val unacknowledged = RetryableWrite.isUnacknowledged(doc)
        val op = ctx.monitoredOperation()
        val timeout = ctx.operationTimeout(timeoutMS, session)
        // in a transaction the write's own write concern is not sent (transactions.md): w: 0 is no unacknowledged write there
        if (session != null && session.isInTransaction) return inTransaction(ctx, database, checked, session, ctx.operationSession(session), timeout, op)
        require(session == null || !unacknowledged) { "an explicit session cannot be used with an unacknowledged write (w: 0)" }
        val s = ctx.operationSession(session)
        return try {
            RetryableWrite(doc, ctx.settings.retryWrites, ctx.sessions, s.current).use { write ->
                try {
                    ctx.runner.run(ServerSelectionOperation.Write, doc.firstKey, timeout.timeoutMS, write, AttemptReply.COMMAND, mayRunOnLoops = true) { selected, connection ->
                        // a write that is not retryable still runs in the (implicit or explicit) session, unless unacknowledged
                        val sent = RawDataField.forConnection(write.commandFor(selected.description, ctx.topology.description.value), connection, selected.description.maxWireVersion)
                            .let { if (it.containsKey("lsid")) s.sessionFields(it, connection) else if (unacknowledged) it else s.attach(it, connection) }
                            .let { timeout.withMaxTimeMS(it, selected.description) }
                        val wire = connection.description?.maxWireVersion
                        val reply = try {
                            ctx.monitored(connection, op, s, timeout).command(database, sent)
                        } catch (e: Throwable) {
                            s.onError(e)
                            write.onError(e, wire)
                            throw timeout.translate(e)
                        }
                        timeout.checkReply(write.checkReply(reply, wire ?: selected.description.maxWireVersion, selected.description.type == ServerType.MONGOS))
                    }
                } catch (e: RetryableWriteConcernReply) {
                    e.reply
                }
            }
        } finally {
            s.release()
        }
    }

    /**
     * The write in [session]'s transaction: sent once (transactions.md: a write in a transaction
     * is not a retryable write; server overload aside) with the transaction's fields, no write
     * concern of its own, on the primary or the pinned mongos.
     */
    private suspend fun inTransaction(
        ctx: OperationContext,
        database: String,
        doc: BsonDocument,
        session: ClientSession,
        s: dev.mooring.sdam.internal.session.OperationSession,
        timeout: dev.mooring.sdam.internal.csot.OperationTimeout,
        op: dev.mooring.cmap.internal.command.MonitoredOperation?,
    ): BsonDocument {
        try {
            val retry = OperationRetry.withOverloadRetries(OperationRetry.NONE, ctx.settings.retryWrites)
            val selection = ctx.selection(s, null)
            return s.onTransactionConnection { ctx.runner.run(selection, doc.firstKey, timeout.timeoutMS, retry, AttemptReply.COMMAND, mayRunOnLoops = true) { selected, connection ->
                val sent = timeout.withMaxTimeMS(s.attach(RawDataField.forConnection(doc, connection, selected.description.maxWireVersion), connection), selected.description)
                val reply = try {
                    ctx.monitored(connection, op, s, timeout).command(database, sent)
                } catch (e: Throwable) {
                    s.onError(e)
                    throw timeout.translate(e)
                }
                timeout.checkReply(reply)
            } }
        } catch (e: Throwable) {
            throw s.failed(e)
        } finally {
            s.release()
        }
    }
}
