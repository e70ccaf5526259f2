package dev.mooring.sdam.internal.cursor

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.PoolClosedException
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoCursorServerUnavailableException
import dev.mooring.sdam.internal.topology.OperationRunner
import dev.mooring.sdam.internal.topology.Topology
import dev.mooring.sdam.internal.topology.onAttemptFailure

/**
 * Runs a cursor's follow-up commands on its [CursorRoute]: on the pinned connection, or on a
 * connection checked out of the cursor's server's pool (checked in afterwards). Errors go
 * through SDAM error handling, as the operation path's do; a connection that saw a network or
 * protocol error is marked perished. A server no longer in the topology, or whose pool closed,
 * fails at once with [MongoCursorServerUnavailableException]; a closing cluster with
 * [MongoClusterClosedException]. Stateless and thread-safe.
 */
internal class CursorConnections(private val topology: Topology, private val runner: OperationRunner) {
    suspend fun <T> run(route: CursorRoute, block: suspend (Connection) -> T): T {
        if (runner.isClosing || topology.isClosed) throw MongoClusterClosedException("the cluster is closed; the cursor on ${route.address} cannot continue")
        return when (route) {
            is CursorRoute.Pinned -> {
                val connection = route.pin.connection ?: throw MongoCursorServerUnavailableException(route.address)
                handled(route, connection, block)
            }
            is CursorRoute.OnServer -> {
                val pool = topology.pool(route.address)?.takeIf { route.address in topology.current.servers }
                    ?: throw MongoCursorServerUnavailableException(route.address)
                val connection = try {
                    pool.checkOut()
                } catch (e: PoolClosedException) {
                    throw MongoCursorServerUnavailableException(route.address, e)
                } // an establishment error reached SDAM from the pool already
                try {
                    handled(route, connection, block)
                } finally {
                    pool.checkIn(connection)
                }
            }
        }
    }

    private suspend fun <T> handled(route: CursorRoute, connection: Connection, block: suspend (Connection) -> T): T =
        try {
            block(connection)
        } catch (e: Throwable) {
            topology.onAttemptFailure(route.address, connection, e)
            throw e
        }
}
