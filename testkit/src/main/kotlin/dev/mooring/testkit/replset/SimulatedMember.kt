package dev.mooring.testkit.replset

import dev.mooring.events.ServerAddress
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.WireServerCounters
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.sync.Mutex
import org.bson.BsonDocument

/**
 * One member of a [ReplicaSetSimulator]: a [WireServer] on `127.0.0.1:<port>` whose hello replies
 * come from the simulator's shared state. The handle stays valid (same host and port) across
 * kill and restart, and after the member is removed from the configuration.
 *
 * Thread-safety: every property may be read from any thread; the runtime state is guarded by the
 * simulator's lock and changed only through the simulator's controls. After the simulator is
 * closed the properties still answer (the member is down) and [configureFailPoint] throws.
 */
class SimulatedMember internal constructor(
    private val simulator: ReplicaSetSimulator,
    server: WireServer,
    initialLastWrite: LastWrite,
    internal var minWireVersion: Int,
    internal var maxWireVersion: Int,
) {
    /** The port; the same after a restart. */
    val port: Int = server.port

    /** `127.0.0.1:<port>`: the member's name in hello `hosts`/`me` and in the configuration. */
    val host: String = "127.0.0.1:$port"

    /** [host] as a [ServerAddress]. */
    val address: ServerAddress = ServerAddress("127.0.0.1", port)

    @Volatile internal var server: WireServer? = server
    internal val lifecycle = Mutex()

    // guarded by simulator.lock
    internal var up = true
    internal var shuttingDown = false
    internal var recovering = false
    internal var lastWriteValue: LastWrite = initialLastWrite
    /** replSetFreeze: not a candidate of an election handoff before this time (epoch millis). */
    internal var frozenUntilMillis = 0L

    internal val topology = MutableStateFlow(TopologyVersion.fresh())
    internal val reachable = MutableStateFlow(true)

    /** The member's current topologyVersion; a new processId after each restart. */
    val topologyVersion: TopologyVersion get() = topology.value

    /** The topologyVersion as a flow (conflated), e.g. to wait for a change in a test. */
    val topologyVersions: StateFlow<TopologyVersion> get() = topology

    /** The state its hello reports now. */
    val state: MemberState get() = simulator.stateOf(this)

    /** This member's entry in the current configuration, or null once removed. */
    val config: MemberConfig? get() = simulator.currentConfig.member(host)

    /** False between kill and restart (and after the simulator is closed). */
    val isUp: Boolean get() = synchronized(simulator.lock) { up }

    /** True while partitioned: requests are read but not answered. */
    val isPartitioned: Boolean get() = !reachable.value

    /** The member's last write as hello reports it. */
    val lastWrite: LastWrite get() = synchronized(simulator.lock) { lastWriteValue }

    /** The running server's counters, or null while the member is down. A restart starts new counters. */
    val counters: WireServerCounters? get() = server?.counters

    /** The number of cursors open on the running server (0 while the member is down; a restart loses them). */
    val openCursors: Int get() = server?.let { it.cursors.openCount + it.changeStreams.openCount } ?: 0

    /**
     * Sets the `failCommand` fail point on the running server (the usual
     * `{configureFailPoint: "failCommand", mode, data}` document; mode `off` clears it). Like on a
     * real mongod the fail point does not survive a restart. Throws [IllegalStateException] while
     * the member is down and [IllegalArgumentException] for a document mongod would reject.
     */
    fun configureFailPoint(command: BsonDocument) {
        val s = server ?: throw IllegalStateException("member $host is down")
        s.configureFailPoint(command)
    }

    /** Clears the fail point, if the member is up. */
    fun clearFailPoint() {
        server?.clearFailPoint()
    }

    override fun toString(): String = "SimulatedMember($host, $state)"
}
