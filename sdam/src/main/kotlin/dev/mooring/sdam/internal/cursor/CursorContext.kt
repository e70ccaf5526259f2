package dev.mooring.sdam.internal.cursor

import dev.mooring.cmap.Connection
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.session.OperationSession
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.tracing.OperationTracer
import dev.mooring.sdam.internal.topology.Topology

/**
 * What the cursors of one cluster share: its [topology], [runner], the [connections] for
 * follow-up commands and command monitoring ([newOperation] starts an operation's monitoring
 * scope, [monitored] wraps a connection in it and gossips the cluster time with the session's) and its [tracer]. Immutable; thread-safe.
 */
internal class CursorContext(
    val topology: Topology,
    val runner: OperationRunner,
    val newOperation: () -> MonitoredOperation?,
    val monitored: (Connection, MonitoredOperation?, OperationSession?, OperationTimeout?) -> Connection,
    /** The cluster's OpenTelemetry tracer, or null when tracing is off. */
    val tracer: OperationTracer? = null,
) {
    val connections: CursorConnections = CursorConnections(topology, runner)
}
