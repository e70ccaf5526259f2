package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.retry.DefaultWriteConcern
import dev.mooring.sdam.internal.retry.RetryableErrors
import dev.mooring.sdam.internal.session.OperationSession
import dev.mooring.sdam.internal.topology.AttemptReply
import dev.mooring.sdam.internal.topology.OperationRetry
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64

/**
 * `commitTransaction` and `abortTransaction` (transactions.md): sent to `admin` on the primary
 * or the pinned mongos with the transaction's fields, its write concern (`w: "majority"` and
 * `wtimeout: 10000` unless set on a commit's retry, or a commit called again), a commit's
 * `maxTimeMS` = maxCommitTimeMS (without timeoutMS; under timeoutMS the remaining time, and no
 * `wtimeout`) and the `recoveryToken`. [run]'s timeout is the session's ([ClientSession]'s rules). Retried once on a
 * retryable error (network, pool cleared, `RetryableWriteError`; the retry unpinned, so it
 * may reach another mongos or connection). In load-balanced mode both go over the transaction's
 * pinned connection; an abort releases it, whatever its outcome. A write concern error fails the command as a `MongoCommandException`
 * carrying the writeConcernError's code. A commit's final error is labelled
 * `UnknownTransactionCommitResult` when its outcome is unknown ([UNKNOWN_COMMIT] rules) and
 * unpins the session; an abort's errors are ignored.
 */
internal object EndTransactionOperation {
    const val UNKNOWN_COMMIT = "UnknownTransactionCommitResult"

    /** UnsatisfiableWriteConcern and UnknownReplWriteConcern: write concern errors whose commit did not happen. */
    private val knownCommitFailures = setOf(100, 79)
    private const val MAX_TIME_MS_EXPIRED = 50
    private const val RETRY_WTIMEOUT_MS = 10_000L

    /**
     * Ends [session]'s transaction; [held]: hold the session for the operation (false for the
     * abort of a session already closed, whose hold was taken by `close`).
     */
    suspend fun run(ctx: OperationContext, session: ClientSession, commit: Boolean, held: Boolean, timeout: OperationTimeout) {
        val s = if (held) {
            OperationSession(ctx.sessions, session.hold(ctx.topology.id), ctx::sessionTimeoutMinutes, session.clock, session::releaseHold, session, endsTransaction = true)
        } else {
            OperationSession(ctx.sessions, session.serverSession, ctx::sessionTimeoutMinutes, session.clock, {}, session, endsTransaction = true)
        }
        val calledAgain = session.transaction.commitSent
        if (commit) session.transaction.commitSent = true
        try {
            val first = try {
                attempt(ctx, session, s, commit, majority = commit && calledAgain, timeout)
                return
            } catch (e: Throwable) {
                if (e is CancellationException) throw e
                RetryableErrors.labelWriteError(e, null)
            }
            if (!retryable(first)) throw first
            session.transaction.unpin() // transactions.md "When to unpin": before the retry's selection
            try {
                attempt(ctx, session, s, commit, majority = commit, timeout)
            } catch (e: Throwable) {
                if (e is CancellationException) throw e
                RetryableErrors.labelWriteError(e, null)
                // the retry's selection failing surfaces the first error (retryable-writes.md)
                throw if (RetryableErrors.isSelectionFailure(e)) first.also { it.addSuppressed(e) } else e.also { it.addSuppressed(first) }
            }
        } catch (e: Throwable) {
            if (e is CancellationException) throw e
            if (!commit) return // transactions.md: abortTransaction's errors are ignored
            throw s.failed(labelCommitError(e), commit = true).also { if (isUnknownCommit(it)) session.transaction.unpin() }
        } finally {
            if (!commit) session.transaction.unpin() // transactions.md: an abort unpins, whatever its outcome
            s.release()
        }
    }

    private fun retryable(e: Throwable): Boolean = e is MongoNetworkException || RetryableErrors.isRetryableWrite(e)

    private fun isUnknownCommit(e: Throwable) = e is MooringException && e.hasErrorLabel(UNKNOWN_COMMIT)

    /** Adds `UnknownTransactionCommitResult` where transactions.md says the commit's outcome is unknown. */
    private fun labelCommitError(e: Throwable): Throwable {
        if (e !is MooringException) return e
        val unknown = e is MongoNetworkException || RetryableErrors.isSelectionFailure(e) || RetryableErrors.isRetryableWrite(e) ||
            e is MongoOperationTimeoutException ||
            (e is MongoCommandException && (e.code == MAX_TIME_MS_EXPIRED || (e.response.containsKey("writeConcernError") && e.code !in knownCommitFailures)))
        if (unknown) e.addErrorLabel(UNKNOWN_COMMIT)
        return e
    }

    private suspend fun attempt(ctx: OperationContext, session: ClientSession, s: OperationSession, commit: Boolean, majority: Boolean, timeout: OperationTimeout): BsonDocument {
        val name = if (commit) "commitTransaction" else "abortTransaction"
        val op = ctx.monitoredOperation()
        val selection = s.transactionSelection(write = true)!!
        return s.onTransactionConnection { ctx.runner.run(selection, name, timeout.timeoutMS, OperationRetry.NONE, AttemptReply.COMMAND) { selected, connection ->
            val sent = timeout.withMaxTimeMS(s.attach(command(session, commit, majority, timeout.isSet), connection), selected.description)
            val reply = try {
                ctx.monitored(connection, op, s, timeout).command("admin", sent)
            } catch (e: Throwable) {
                s.onError(e)
                throw timeout.translate(e)
            }
            timeout.checkReply(reply)
            val wce = reply["writeConcernError"] as? BsonDocument
            if (wce != null) throw MongoCommandException(asError(reply, wce), connection.address, connection.generation)
            reply
        } }
    }

    /** The reply of a command that failed only its write concern, as an error reply with the writeConcernError's code. */
    private fun asError(reply: BsonDocument, wce: BsonDocument): BsonDocument = reply.clone().apply {
        put("ok", BsonInt32(0))
        wce["code"]?.let { put("code", it) }
        wce["codeName"]?.let { put("codeName", it) }
        wce["errmsg"]?.let { put("errmsg", it) }
    }

    private fun command(session: ClientSession, commit: Boolean, majority: Boolean, underTimeoutMS: Boolean): BsonDocument {
        val txn = session.transaction
        val cmd = BsonDocument(if (commit) "commitTransaction" else "abortTransaction", BsonInt32(1))
        val concern = txn.options.writeConcern ?: WriteConcern.DEFAULT
        val wc = if (majority) WriteConcern(WriteAcknowledgement.MAJORITY, concern.wTimeoutMS ?: RETRY_WTIMEOUT_MS, concern.journal) else concern
        val withConcern = DefaultWriteConcern.applyTo(cmd, wc, underTimeoutMS)
        if (commit && !underTimeoutMS) txn.options.maxCommitTimeMS?.let { withConcern["maxTimeMS"] = BsonInt64(it) }
        txn.recoveryToken?.let { withConcern["recoveryToken"] = it }
        return withConcern
    }
}
