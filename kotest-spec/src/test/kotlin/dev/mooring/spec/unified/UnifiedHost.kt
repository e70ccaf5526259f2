package dev.mooring.spec.unified

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.StreamingHello
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider
import dev.mooring.testkit.server.auth.oidc.OidcServer
import dev.mooring.testkit.server.scram.ScramServer
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import org.bson.BsonDocument
import java.nio.file.Files
import java.nio.file.Path

/**
 * The deployment a unified test runs against: a standalone [WireServer], a
 * [ReplicaSetSimulator], a [ShardedClusterSimulator] (mongos routers) or a
 * [LoadBalancerSimulator]. Standalone servers and routers speak the streaming hello protocol
 * ([StreamingHello]: topologyVersion in every hello, awaitable and exhaust hellos), as the
 * MongoDB 4.4+ versions they report (wire version 21 unless a test needs another) do. Replica set members and routers
 * report signed cluster times (`$clusterTime`), as MongoDB 3.6+ does. With authentication ([Credentials]), every server of the deployment
 * runs a [ScramServer] that refuses commands on unauthenticated connections, and [uri] carries
 * the credentials, as the unified format has runners do for `auth: true` deployments.
 */
sealed interface UnifiedHost : AutoCloseable {
    /** The connection string with [options]; [useMultipleMongoses] names every router of a sharded deployment. */
    fun uri(options: Map<String, String>, useMultipleMongoses: Boolean = false): String

    /** Configures (or with mode off clears) the failCommand fail point where the test's client runs commands. */
    fun configureFailPoint(command: BsonDocument)

    /** The value a `{"$$placeholder": 1}` URI option stands for on this deployment (auth-unified). */
    fun placeholder(option: String): String = throw UnsupportedOperationException("no placeholder value for $option on this deployment")

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
            lb.seedUri(query(options), singleMongos = !useMultipleMongoses).replaceFirst("mongodb://", prefix)

        override fun configureFailPoint(command: BsonDocument) = lb.configureFailPoint(command)

        override fun close() = lb.close()
    }

    /**
     * A standalone [WireServer] that requires MONGODB-OIDC ([OidcServer]): every URI carries
     * `authMechanism=MONGODB-OIDC` and `ENVIRONMENT:test`, whose token file (OIDC_TOKEN_FILE,
     * set through Mooring's internal override while the host lives) holds a token of [idp].
     */
    class Oidc(private val server: WireServer, idp: OidcIdentityProvider) : Base(false) {
        private val tokenFile: Path = Files.createTempFile("mooring-oidc", ".jwt").also { Files.writeString(it, idp.issue("unified-oidc-user")) }

        init {
            System.setProperty(TOKEN_FILE_PROPERTY, tokenFile.toString())
        }

        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            "mongodb://${server.address}/?" + query(mapOf("authMechanism" to MECHANISM, "authMechanismProperties" to PROPERTIES) + options)

        override fun placeholder(option: String): String =
            if (option == "authMechanismProperties") PROPERTIES else super.placeholder(option)

        override fun configureFailPoint(command: BsonDocument) = server.configureFailPoint(command)

        override fun close() {
            server.close()
            System.clearProperty(TOKEN_FILE_PROPERTY)
            Files.deleteIfExists(tokenFile)
        }

        companion object {
            const val MECHANISM = "MONGODB-OIDC"
            private const val PROPERTIES = "ENVIRONMENT:test"
            private const val TOKEN_FILE_PROPERTY = "mooring.internal.oidc.OIDC_TOKEN_FILE"
        }
    }

    companion object {
        /** The topology names of runOnRequirements this runner can host, in order of preference. */
        val hostable = listOf("single", "replicaset", "sharded", "load-balanced")

        /** The topologies the runner can host with authentication (the replica set simulator has no SCRAM hook). */
        val hostableWithAuth = listOf("single", "sharded", "load-balanced")

        /** Authentication mechanisms (besides SCRAM) the runner can host, on a standalone server only. */
        val hostableMechanisms = listOf(Oidc.MECHANISM)

        /**
         * Starts a [topology] deployment, authenticating with SCRAM when [auth], or with [mechanism];
         * [maxWireVersion] below 21 (an older MongoDB) is for the replica set and sharded cluster only.
         * Replica sets and sharded clusters report cluster times (`$clusterTime`), as MongoDB 3.6+ does.
         */
        suspend fun start(topology: String, auth: Boolean = false, mechanism: String? = null, maxWireVersion: Int = 21): UnifiedHost {
            require(maxWireVersion == 21 || topology == "replicaset" || topology == "sharded") {
                "only the replica set and sharded cluster simulators host older server versions"
            }
            if (mechanism == Oidc.MECHANISM) {
                require(topology == "single") { "the test kit hosts MONGODB-OIDC on a standalone server" }
                val idp = OidcIdentityProvider()
                return Oidc(WireServer.start().also { it.streaming = StreamingHello(); OidcServer(idp).install(it) }, idp)
            }
            return when (topology) {
                "single" -> Single(WireServer.start().also { it.streaming = StreamingHello(); if (auth) Credentials.install(it) }, auth)
                "replicaset" -> {
                    require(!auth) { "the replica set simulator cannot authenticate" }
                    // a stepped-down primary hands the election off at once, as mongod 4.0.2+ does
                    ReplicaSet(ReplicaSetSimulator.start(dataMembers = 3, maxWireVersion = maxWireVersion, clusterTime = true).also { it.electionHandoff = true })
                }
                "sharded" -> Sharded(
                    ShardedClusterSimulator.start(2, maxWireVersion, clusterTime = true).also { c ->
                        c.mongoses.forEach { m ->
                            // the streaming protocol came with MongoDB 4.4 (wire version 9)
                            if (maxWireVersion >= 9) m.streaming = StreamingHello()
                            if (auth) Credentials.install(m)
                        }
                    },
                    auth,
                )
                "load-balanced" -> LoadBalanced(LoadBalancerSimulator.start(2).also { if (auth) { Credentials.install(it.server); Credentials.install(it.singleServer) } }, auth)
                else -> error("cannot host $topology")
            }
        }
    }
}
