package dev.mooring.java

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.SimulatedMember
import kotlinx.coroutines.runBlocking

/**
 * Blocking wrappers of the test kit's suspending controls for the Java tests (the test kit is
 * Kotlin; the facade under test is not involved here). Tests only.
 */
object JavaTestKit {
    /** Starts a replica set of [dataMembers] members, member 0 primary. */
    @JvmStatic
    fun startReplicaSet(dataMembers: Int): ReplicaSetSimulator = runBlocking { ReplicaSetSimulator.start(dataMembers = dataMembers) }

    /** Kills [member] (its server stops accepting and drops its connections). */
    @JvmStatic
    fun kill(rs: ReplicaSetSimulator, member: SimulatedMember): Unit = runBlocking { rs.kill(member) }
}
