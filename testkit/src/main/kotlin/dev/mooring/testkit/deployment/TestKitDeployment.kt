package dev.mooring.testkit.deployment

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.StreamingHello
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import dev.mooring.testkit.sharded.ShardedClusterSimulator

/**
 * A test-kit deployment configured as the unified-format spec runner hosts it: a standalone
 * [WireServer], a three-member [ReplicaSetSimulator], two [ShardedClusterSimulator] routers or a
 * [LoadBalancerSimulator] with two backends. Standalone servers and routers speak the streaming
 * hello protocol ([StreamingHello]) from wire version 9 (MongoDB 4.4) on; replica set members and
 * routers report signed cluster times (`$clusterTime`) as MongoDB 3.6+ does; a stepped-down
 * primary hands the election off at once, as mongod 4.0.2+ does. With authentication every
 * server of the deployment runs a [ScramServer] knowing [USER] in `admin`.
 *
 * The same configuration serves the runner's in-process deployments and the separate process of
 * [main] (`TestKitServerMain`), so a run over the wire faces the servers an in-process run faces.
 * Fail points are set over the wire with the `configureFailPoint` admin command (see [WireServer]).
 *
 * Thread-safe as its simulators are; [close] closes every server and is idempotent.
 */
sealed class TestKitDeployment(
    /** The runOnRequirements topology name: `single`, `replicaset`, `sharded` or `load-balanced`. */
    val topology: String,
    /** Whether every server requires SCRAM authentication as [USER]. */
    val auth: Boolean,
) : AutoCloseable {
    /**
     * The connection string with [options] (`key=value&...`) appended, carrying the credentials
     * when [auth]; [multiple] names every router of a sharded cluster (the unified format's
     * `useMultipleMongoses`), or the load balancer in front of every backend.
     */
    fun uri(options: String = "", multiple: Boolean = false): String = plainUri(options, multiple).let {
        if (auth) it.replaceFirst("mongodb://", "mongodb://$USER:$PASSWORD@") else it
    }

    protected abstract fun plainUri(options: String, multiple: Boolean): String

    /** A standalone server. */
    class Single(val server: WireServer, auth: Boolean) : TestKitDeployment("single", auth) {
        override fun plainUri(options: String, multiple: Boolean) = "mongodb://${server.address}/" + if (options.isEmpty()) "" else "?$options"
        override fun close() = server.close()
    }

    /** A replica set of three data-bearing members (the seed list names the first only). */
    class ReplicaSet(val replicaSet: ReplicaSetSimulator) : TestKitDeployment("replicaset", false) {
        override fun plainUri(options: String, multiple: Boolean) = replicaSet.seedUri(options)
        override fun close() = replicaSet.close()
    }

    /** Two mongos routers. */
    class Sharded(val cluster: ShardedClusterSimulator, auth: Boolean) : TestKitDeployment("sharded", auth) {
        override fun plainUri(options: String, multiple: Boolean) = cluster.seedUri(options, multiple)
        override fun close() = cluster.close()
    }

    /** A load balancer in front of two routers (and one in front of the first router only). */
    class LoadBalanced(val loadBalancer: LoadBalancerSimulator, auth: Boolean) : TestKitDeployment("load-balanced", auth) {
        override fun plainUri(options: String, multiple: Boolean) = loadBalancer.seedUri(options, singleMongos = !multiple)
        override fun close() = loadBalancer.close()
    }

    companion object {
        /** The user every authenticated deployment knows, in `admin`. */
        const val USER = "unified-user"

        /** [USER]'s password. */
        const val PASSWORD = "unified-pencil"

        /** The topologies [start] hosts, in the unified runner's order of preference. */
        val TOPOLOGIES = listOf("single", "replicaset", "sharded", "load-balanced")

        /** The topologies [start] hosts with authentication (the replica set simulator has no SCRAM hook). */
        val TOPOLOGIES_WITH_AUTH = listOf("single", "sharded", "load-balanced")

        /** Installs a [ScramServer] knowing [USER] on [server]. */
        fun requireAuth(server: WireServer) {
            val scram = ScramServer()
            scram.addUser("admin", USER, PASSWORD)
            scram.install(server)
        }

        /**
         * Starts a [topology] deployment (one of [TOPOLOGIES]), requiring SCRAM authentication
         * when [auth] (not for `replicaset`); [maxWireVersion] below 21 (an older MongoDB) is for
         * the replica set and the sharded cluster only. On failure nothing stays open.
         */
        suspend fun start(topology: String, auth: Boolean = false, maxWireVersion: Int = 21): TestKitDeployment {
            require(topology in TOPOLOGIES) { "the test kit hosts ${TOPOLOGIES.joinToString("/")}, not $topology" }
            require(!auth || topology in TOPOLOGIES_WITH_AUTH) { "the test kit cannot authenticate in a $topology deployment" }
            require(maxWireVersion == 21 || topology == "replicaset" || topology == "sharded") {
                "only the replica set and sharded cluster simulators host older server versions"
            }
            return when (topology) {
                "single" -> Single(WireServer.start().also { it.streaming = StreamingHello(); if (auth) requireAuth(it) }, auth)
                "replicaset" -> ReplicaSet(
                    ReplicaSetSimulator.start(dataMembers = 3, maxWireVersion = maxWireVersion, clusterTime = true).also { it.electionHandoff = true },
                )
                "sharded" -> Sharded(
                    ShardedClusterSimulator.start(2, maxWireVersion, clusterTime = true).also { c ->
                        c.mongoses.forEach { m ->
                            // the streaming protocol came with MongoDB 4.4 (wire version 9)
                            if (maxWireVersion >= 9) m.streaming = StreamingHello()
                            if (auth) requireAuth(m)
                        }
                    },
                    auth,
                )
                else -> LoadBalanced(
                    LoadBalancerSimulator.start(2).also { if (auth) { requireAuth(it.server); requireAuth(it.singleServer) } },
                    auth,
                )
            }
        }
    }
}
