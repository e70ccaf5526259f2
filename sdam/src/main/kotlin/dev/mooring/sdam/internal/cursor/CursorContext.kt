package dev.mooring.sdam.internal.cursor

import dev.mooring.cmap.Connection
import dev.mooring.cmap.internal.command.MonitoredOperation
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.Topology

/**
 * What the cursors of one cluster share: its [topology], [runner], the [connections] for
 * follow-up commands and command monitoring ([newOperation] starts an operation's monitoring
 * scope, [monitored] wraps a connection in it). Immutable; thread-safe.
 */
internal class CursorContext(
    val topology: Topology,
    val runner: OperationRunner,
    val newOperation: () -> MonitoredOperation?,
    val monitored: (Connection, MonitoredOperation?) -> Connection,
) {
    val connections: CursorConnections = CursorConnections(topology, runner)
}
