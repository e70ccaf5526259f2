package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import org.bson.types.ObjectId

/**
 * A side effect the live topology must carry out after applying a [TopologyUpdate], in the
 * order given and inside the same critical section that installs the new description
 * (SDAM: clearing a pool is synchronized with marking the server Unknown; a pool is marked
 * ready before the server is published as selectable). Immutable values.
 */
internal sealed interface TopologyAction {
    /** The server the action is about. */
    public val address: ServerAddress

    /** A server joined the topology: create its pool (paused) and start monitoring it. */
    public data class StartMonitoring(override val address: ServerAddress) : TopologyAction

    /** A server left the topology: stop its monitor and close its pool. Its outcomes are ignored from now on. */
    public data class StopMonitoring(override val address: ServerAddress) : TopologyAction

    /** A check succeeded and the server is usable: mark its pool ready (before publishing the new description). */
    public data class MarkPoolReady(override val address: ServerAddress) : TopologyAction

    /**
     * Clear the server's pool (increment its generation), or in load-balanced mode only the
     * connections to [serviceId]. [interruptInUseConnections] asks the pool to close checked-out
     * connections too (only for monitor timeouts, never for application errors).
     */
    public data class ClearPool(
        override val address: ServerAddress,
        val serviceId: ObjectId? = null,
        val interruptInUseConnections: Boolean = false,
    ) : TopologyAction

    /** Ask the server's monitor to check it now instead of waiting for heartbeatFrequencyMS. */
    public data class RequestImmediateCheck(override val address: ServerAddress) : TopologyAction

    /** Cancel the monitor's in-progress check of the server (after a network error on an application connection). */
    public data class CancelCheck(override val address: ServerAddress) : TopologyAction
}
