package dev.mooring.testkit.replset.internal

import dev.mooring.testkit.replset.LastWrite
import dev.mooring.testkit.replset.MemberConfig
import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetConfig
import dev.mooring.testkit.replset.TopologyVersion
import org.bson.types.ObjectId

/** Everything one member's hello reply depends on, taken under the simulator's lock. Immutable. */
internal class HelloSnapshot(
    val host: String,
    val state: MemberState,
    val config: ReplicaSetConfig,
    val self: MemberConfig?,
    val primaryHost: String?,
    val electionId: ObjectId?,
    val topologyVersion: TopologyVersion,
    val lastWrite: LastWrite,
    val minWireVersion: Int,
    val maxWireVersion: Int,
    val shuttingDown: Boolean,
)
