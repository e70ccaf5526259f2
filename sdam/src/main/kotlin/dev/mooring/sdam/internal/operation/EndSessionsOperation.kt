package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.MongoServerException
import dev.mooring.sdam.internal.session.EndSessions
import dev.mooring.sdam.internal.tracing.trace
import kotlinx.coroutines.withTimeoutOrNull

/**
 * driver-sessions.md: `endSessions` for the pooled server sessions when the cluster closes,
 * bounded by serverSelectionTimeoutMS, its errors ignored.
 */
internal object EndSessionsOperation {
    suspend fun run(ctx: OperationContext) {
        val commands = EndSessions.commands(ctx.sessions.drain())
        if (commands.isEmpty()) return
        val pool = EndSessions.target(ctx.topology.description.value)?.let { ctx.topology.pool(it) } ?: return
        val op = ctx.monitoredOperation()
        withTimeoutOrNull(ctx.settings.serverSelectionTimeoutMS) {
            try {
                // OpenTelemetry: an operation span of its own around the endSessions command spans
                ctx.tracer.trace("endSessions", "admin") { pool.withConnection { c -> EndSessions.send(ctx.monitored(c, op), commands) } }
            } catch (e: MongoServerException) {
                // driver-sessions.md: errors of endSessions are ignored
            }
        }
    }
}
