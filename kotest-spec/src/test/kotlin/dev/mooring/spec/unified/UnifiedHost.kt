package dev.mooring.spec.unified

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import org.bson.BsonDocument

/**
 * The deployment a unified test runs against: a standalone [WireServer], a
 * [ReplicaSetSimulator], a [ShardedClusterSimulator] (mongos routers) or a
 * [LoadBalancerSimulator]. With authentication ([Credentials]), every server of the deployment
 * runs a [ScramServer] that refuses commands on unauthenticated connections, and [uri] carries
 * the credentials, as the unified format has runners do for `auth: true` deployments.
 */
sealed interface UnifiedHost : AutoCloseable {
    /** The connection string with [options]; [useMultipleMongoses] names every router of a sharded deployment. */
    fun uri(options: Map<String, String>, useMultipleMongoses: Boolean = false): String

    /** Configures (or with mode off clears) the failCommand fail point where the test's client runs commands. */
    fun configureFailPoint(command: BsonDocument)

    /** The user every authenticated deployment knows, in `admin`. */
    object Credentials {
        const val USER = "unified-user"
        const val PASSWORD = "unified-pencil"

        fun install(server: WireServer) {
            val scram = ScramServer()
            scram.addUser("admin", USER, PASSWORD)
            scram.install(server)
        }
    }

    abstract class Base(private val auth: Boolean) : UnifiedHost {
        protected fun query(options: Map<String, String>) = options.entries.joinToString("&") { "${it.key}=${it.value}" }

        /** `mongodb://[user:password@]` */
        protected val prefix: String get() = "mongodb://" + if (auth) "${Credentials.USER}:${Credentials.PASSWORD}@" else ""
    }

    class Single(private val server: WireServer, auth: Boolean) : Base(auth) {
        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            "$prefix${server.address}/" + if (options.isEmpty()) "" else "?" + query(options)

        override fun configureFailPoint(command: BsonDocument) = server.configureFailPoint(command)

        override fun close() = server.close()
    }

    class ReplicaSet(private val rs: ReplicaSetSimulator) : Base(false) {
        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) = rs.seedUri(query(options))

        /** Fail points go to the primary, where the test's operations run (useMultipleMongoses is irrelevant here). */
        override fun configureFailPoint(command: BsonDocument) = rs.primary!!.configureFailPoint(command)

        override fun close() = rs.close()
    }

    class Sharded(private val cluster: ShardedClusterSimulator, auth: Boolean) : Base(auth) {
        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            cluster.seedUri(query(options), useMultipleMongoses).replaceFirst("mongodb://", prefix)

        override fun configureFailPoint(command: BsonDocument) = cluster.configureFailPoint(command)

        override fun close() = cluster.close()
    }

    class LoadBalanced(private val lb: LoadBalancerSimulator, auth: Boolean) : Base(auth) {
        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            lb.seedUri(query(options)).replaceFirst("mongodb://", prefix)

        override fun configureFailPoint(command: BsonDocument) = lb.configureFailPoint(command)

        override fun close() = lb.close()
    }

    companion object {
        /** The topology names of runOnRequirements this runner can host, in order of preference. */
        val hostable = listOf("single", "replicaset", "sharded", "load-balanced")

        /** The topologies the runner can host with authentication (the replica set simulator has no SCRAM hook). */
        val hostableWithAuth = listOf("single", "sharded", "load-balanced")

        /** Starts a [topology] deployment; [maxWireVersion] below 21 (an older MongoDB) is for the replica set only. */
        suspend fun start(topology: String, auth: Boolean = false, maxWireVersion: Int = 21): UnifiedHost {
            require(maxWireVersion == 21 || topology == "replicaset") { "only the replica set simulator hosts older server versions" }
            return when (topology) {
                "single" -> Single(WireServer.start().also { if (auth) Credentials.install(it) }, auth)
                "replicaset" -> {
                    require(!auth) { "the replica set simulator cannot authenticate" }
                    // a stepped-down primary hands the election off at once, as mongod 4.0.2+ does
                    ReplicaSet(ReplicaSetSimulator.start(dataMembers = 3, maxWireVersion = maxWireVersion).also { it.electionHandoff = true })
                }
                "sharded" -> Sharded(ShardedClusterSimulator.start(2).also { c -> if (auth) c.mongoses.forEach { Credentials.install(it) } }, auth)
                "load-balanced" -> LoadBalanced(LoadBalancerSimulator.start(2).also { if (auth) Credentials.install(it.server) }, auth)
                else -> error("cannot host $topology")
            }
        }
    }
}
