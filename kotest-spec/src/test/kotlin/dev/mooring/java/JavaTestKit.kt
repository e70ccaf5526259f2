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

    /** Starts a replica set of [dataMembers] members that reports cluster times (as change streams need), member 0 primary. */
    @JvmStatic
    fun startReplicaSetWithClusterTime(dataMembers: Int): ReplicaSetSimulator =
        runBlocking { ReplicaSetSimulator.start(dataMembers = dataMembers, clusterTime = true) }

    /** Starts a standalone server that requires MONGODB-OIDC with tokens of [idp]. */
    @JvmStatic
    fun startOidcServer(idp: dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider): dev.mooring.testkit.server.WireServer = runBlocking {
        dev.mooring.testkit.server.WireServer.start().also { dev.mooring.testkit.server.auth.oidc.OidcServer(idp).install(it) }
    }

    /** Kills [member] (its server stops accepting and drops its connections). */
    @JvmStatic
    fun kill(rs: ReplicaSetSimulator, member: SimulatedMember): Unit = runBlocking { rs.kill(member) }
}
