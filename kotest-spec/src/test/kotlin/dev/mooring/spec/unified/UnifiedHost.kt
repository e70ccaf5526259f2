package dev.mooring.spec.unified

import dev.mooring.testkit.deployment.TestKitDeployment
import dev.mooring.testkit.server.StreamingHello
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider
import dev.mooring.testkit.server.auth.oidc.OidcServer
import java.nio.file.Files
import java.nio.file.Path

/**
 * The deployment a unified test runs against: a [TestKitDeployment] started in this process for
 * the test ([InProcess]: a standalone server, replica set, sharded cluster or load balancer,
 * configured as that class says), a standalone server requiring MONGODB-OIDC ([Oidc]), or a
 * deployment outside this process reached only through its connection string
 * ([ExternalHost], from `MONGODB_URI`). The runner reaches every one of them over the wire only:
 * fail points are set with the `configureFailPoint` admin command through the test's client
 * (the `failPoint` operation). With authentication, [uri] carries the credentials, as the unified
 * format has runners do for `auth: true` deployments.
 */
sealed interface UnifiedHost : AutoCloseable {
    /** The connection string with [options]; [useMultipleMongoses] names every router of a sharded deployment. */
    fun uri(options: Map<String, String>, useMultipleMongoses: Boolean = false): String

    /** The value a `{"$$placeholder": 1}` URI option stands for on this deployment (auth-unified). */
    fun placeholder(option: String): String = throw UnsupportedOperationException("no placeholder value for $option on this deployment")

    /** Readies a deployment that outlives tests for the next one (unified-test-format.md, "Terminating Open Transactions"); a fresh one needs nothing. */
    suspend fun beforeTest() = Unit

    /** Disables the fail points [names] a test configured (unified-test-format.md, "Disabling Fail Points"); a deployment closed after the test needs nothing. */
    suspend fun disableFailPoints(names: Set<String>) = Unit

    /** A test-kit deployment started for one test and closed after it. */
    class InProcess(private val deployment: TestKitDeployment) : UnifiedHost {
        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            deployment.uri(options.entries.joinToString("&") { "${it.key}=${it.value}" }, useMultipleMongoses)

        override fun close() = deployment.close()
    }

    /**
     * A standalone [WireServer] that requires MONGODB-OIDC ([OidcServer]): every URI carries
     * `authMechanism=MONGODB-OIDC` and `ENVIRONMENT:test`, whose token file (OIDC_TOKEN_FILE,
     * set through Mooring's internal override while the host lives) holds a token of [idp].
     */
    class Oidc(private val server: WireServer, idp: OidcIdentityProvider) : UnifiedHost {
        private val tokenFile: Path = Files.createTempFile("mooring-oidc", ".jwt").also { Files.writeString(it, idp.issue("unified-oidc-user")) }

        init {
            System.setProperty(TOKEN_FILE_PROPERTY, tokenFile.toString())
        }

        override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean) =
            "mongodb://${server.address}/?" + (mapOf("authMechanism" to MECHANISM, "authMechanismProperties" to PROPERTIES) + options).entries.joinToString("&") { "${it.key}=${it.value}" }

        override fun placeholder(option: String): String =
            if (option == "authMechanismProperties") PROPERTIES else super.placeholder(option)

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
        val hostable = TestKitDeployment.TOPOLOGIES

        /** The topologies the runner can host with authentication (the replica set simulator has no SCRAM hook). */
        val hostableWithAuth = TestKitDeployment.TOPOLOGIES_WITH_AUTH

        /** Authentication mechanisms (besides SCRAM) the runner can host, on a standalone server only. */
        val hostableMechanisms = listOf(Oidc.MECHANISM)

        /**
         * Starts a [topology] deployment in this process, authenticating with SCRAM when [auth], or
         * with [mechanism]; [maxWireVersion] below 21 (an older MongoDB) is for the replica set and
         * sharded cluster only (see [TestKitDeployment.start]).
         */
        suspend fun start(topology: String, auth: Boolean = false, mechanism: String? = null, maxWireVersion: Int = 21): UnifiedHost {
            if (mechanism == Oidc.MECHANISM) {
                require(topology == "single") { "the test kit hosts MONGODB-OIDC on a standalone server" }
                val idp = OidcIdentityProvider()
                return Oidc(WireServer.start().also { it.streaming = StreamingHello(); OidcServer(idp).install(it) }, idp)
            }
            return InProcess(TestKitDeployment.start(topology, auth, maxWireVersion))
        }
    }
}
