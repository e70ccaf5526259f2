package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.Connection
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.internal.session.SessionConnection
import dev.mooring.sdam.internal.topology.AttemptReply
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.tracing.trace
import kotlinx.coroutines.yield

/**
 * A caller's block with a connection to a server selected by read preference (no retry: the
 * block may not be idempotent). The block's result is the caller's value, never taken for a
 * command reply ([AttemptReply.NONE]). The block runs in a dispatch of its own (`yield()`),
 * never on the thread that served the checkout, which resumes the pool's other waiters next
 * (docs/architecture.md, "Which thread runs this line").
 */
internal object WithConnectionOperation {
    suspend fun <T> run(
        ctx: OperationContext,
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMS: Long?,
        block: suspend (Connection) -> T,
    ): T {
        val op = ctx.monitoredOperation()
        val timeout = ctx.operationTimeout(timeoutMS, session)
        val s = session?.let { ctx.operationSession(it) }
        try {
            val selection = s?.transactionSelection(write = false) ?: ServerSelectionOperation.Read(readPreference)
            val attempt: suspend () -> T = {
                ctx.runner.run(selection, "withConnection", timeout.timeoutMS, OperationRetry.NONE, AttemptReply.NONE) { _, c ->
                    val monitoredConnection = ctx.monitored(c, op, s, timeout)
                    yield()
                    block(if (s == null) monitoredConnection else SessionConnection(monitoredConnection, s))
                }
            }
            // in a transaction (load-balanced mode): on its pinned connection
            return ctx.tracer.trace("withConnection", null, s?.transactionSpan) { if (s == null) attempt() else s.onTransactionConnection { attempt() } }
        } finally {
            s?.release()
        }
    }
}
