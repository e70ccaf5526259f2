package dev.mooring.spec.unified

import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * A deployment outside this process that the unified runner reaches only over the wire
 * (unified-test-format.md, "Initializing the Test Runner"): its connection string [uri]
 * (`MONGODB_URI`), its topology type (`MONGODB_TOPOLOGY`, else found with `hello` through an
 * internal client: `isdbgrid` a sharded cluster, `setName` a replica set, `loadBalanced=true`
 * in the URI a load balancer, else a standalone server) and its server version (`buildInfo`,
 * held to the newest version the reported maxWireVersion allows). A load-balanced deployment
 * also needs `SINGLE_MONGOS_LB_URI` (else [uri]) and `MULTI_MONGOS_LB_URI` for clients with
 * useMultipleMongoses. Whether it authenticates is whether [uri] carries credentials.
 *
 * Immutable; thread-safe.
 */
class ExternalDeployment(
    val uri: String,
    val topology: String,
    val version: String,
    /** The servers fail points are disabled on after each test (and, for a sharded cluster, killAllSessions runs on). */
    val hosts: List<String>,
    val singleLoadBalancerUri: String?,
    val multiLoadBalancerUri: String?,
) {
    /** Whether [uri] carries credentials (runOnRequirements `auth`). */
    val auth: Boolean get() = ConnectionStringParts.parse(uri).userInfo != null

    override fun toString() = "a $topology deployment of MongoDB $version${if (auth) " with authentication" else ""} ($MONGODB_URI)"

    companion object {
        const val MONGODB_URI = "MONGODB_URI"

        /** The deployment of the environment (`MONGODB_URI` set), discovered once; null runs the suites on the test kit in process. */
        val fromEnvironment: ExternalDeployment? by lazy {
            System.getenv(MONGODB_URI)?.takeIf { it.isNotBlank() }?.let { runBlocking { discover(System.getenv()) } }
        }

        private val TOPOLOGIES = setOf("single", "replicaset", "sharded", "load-balanced")

        /**
         * MongoDB versions by the maxWireVersion they report: a `buildInfo` version at or past the
         * release of a wire version above the reported one, or before the reported one's release,
         * is taken to be the reported wire version's release (the test kit's servers report 7.0.0
         * whatever wire version they simulate).
         */
        private val VERSION_BY_WIRE = sortedMapOf(6 to "3.6", 7 to "4.0", 8 to "4.2", 9 to "4.4", 13 to "5.0", 17 to "6.0", 21 to "7.0", 25 to "8.0")

        /** Discovers the deployment [env] names (`MONGODB_URI`, `MONGODB_TOPOLOGY`, `SINGLE_MONGOS_LB_URI`, `MULTI_MONGOS_LB_URI`). */
        suspend fun discover(env: Map<String, String>): ExternalDeployment {
            val uri = env.getValue(MONGODB_URI)
            val parts = ConnectionStringParts.parse(uri)
            val single = env["SINGLE_MONGOS_LB_URI"]?.takeIf { it.isNotBlank() }
            val multi = env["MULTI_MONGOS_LB_URI"]?.takeIf { it.isNotBlank() }
            val internal = MongoCluster(MongoClusterSettings.fromUri(single ?: uri))
            try {
                val hello = internal.runCommand("admin", BsonDocument("hello", BsonInt32(1)))
                val buildInfo = internal.runCommand("admin", BsonDocument("buildInfo", BsonInt32(1)))
                val topology = env["MONGODB_TOPOLOGY"]?.takeIf { it.isNotBlank() }?.also {
                    require(it in TOPOLOGIES) { "MONGODB_TOPOLOGY must be one of $TOPOLOGIES, got $it" }
                } ?: when {
                    single != null || parts.option("loadBalanced") == "true" -> "load-balanced"
                    hello.getString("msg", null)?.value == "isdbgrid" -> "sharded"
                    hello.containsKey("setName") -> "replicaset"
                    else -> "single"
                }
                val wire = hello.getNumber("maxWireVersion", BsonInt32(0)).intValue()
                val byWire = VERSION_BY_WIRE.headMap(wire + 1).values.lastOrNull() ?: "3.6"
                val reported = buildInfo.getString("version", BsonString(byWire)).value
                // a version at or past the next wire version's release cannot report this wire version
                val next = VERSION_BY_WIRE.tailMap(wire + 1).values.firstOrNull()
                val version = when {
                    next != null && compareVersions(reported, next) >= 0 -> byWire
                    // nor can a version released before this wire version
                    compareVersions(reported, byWire) < 0 -> byWire
                    else -> reported
                }
                val hosts = when (topology) {
                    // every member, wherever the primary is by the end of a test
                    "replicaset" -> (hello["hosts"] as? BsonArray)?.map { it.asString().value } ?: parts.hosts
                    else -> parts.hosts
                }
                return ExternalDeployment(uri, topology, version, hosts, single, multi)
            } finally {
                internal.closeSuspending()
            }
        }

        /** [a] before (negative), equal to or after (positive) [b], component by component. */
        fun compareVersions(a: String, b: String): Int {
            val x = a.split('.', '-').map { it.toIntOrNull() ?: 0 }
            val y = b.split('.', '-').map { it.toIntOrNull() ?: 0 }
            for (i in 0 until maxOf(x.size, y.size)) {
                val c = x.getOrElse(i) { 0 }.compareTo(y.getOrElse(i) { 0 })
                if (c != 0) return c
            }
            return 0
        }
    }
}

/**
 * A connection string taken apart as far as the runner needs: scheme and user info, hosts, the
 * path (`/db`) and the options in order. Immutable.
 */
class ConnectionStringParts(
    private val scheme: String,
    val userInfo: String?,
    val hosts: List<String>,
    private val path: String,
    private val options: List<Pair<String, String>>,
) {
    fun option(name: String): String? = options.lastOrNull { it.first.equals(name, ignoreCase = true) }?.second

    /** The same deployment naming [hosts] only. */
    fun withHosts(hosts: List<String>) = ConnectionStringParts(scheme, userInfo, hosts, path, options)

    /** With [set] (each replacing an option of the same name, case-insensitively) and without [remove]. */
    fun withOptions(set: Map<String, String>, remove: Set<String> = emptySet()): ConnectionStringParts {
        val dropped = (set.keys + remove).map { it.lowercase() }.toSet()
        return ConnectionStringParts(scheme, userInfo, hosts, path, options.filter { it.first.lowercase() !in dropped } + set.toList())
    }

    override fun toString(): String =
        "$scheme://" + (userInfo?.let { "$it@" } ?: "") + hosts.joinToString(",") + path.ifEmpty { "/" } +
            if (options.isEmpty()) "" else "?" + options.joinToString("&") { "${it.first}=${it.second}" }

    companion object {
        fun parse(uri: String): ConnectionStringParts {
            val scheme = uri.substringBefore("://")
            require(scheme != uri) { "not a connection string: $uri" }
            val rest = uri.substringAfter("://")
            val query = rest.substringAfter('?', "")
            val beforeQuery = rest.substringBefore('?')
            val authority = beforeQuery.substringBefore('/')
            val path = beforeQuery.substring(authority.length)
            val userInfo = authority.substringBeforeLast('@', "").ifEmpty { null }
            val hosts = authority.substringAfterLast('@').split(',').filter { it.isNotEmpty() }
            val options = query.split('&').filter { it.isNotEmpty() }.map { it.substringBefore('=') to it.substringAfter('=', "") }
            return ConnectionStringParts(scheme, userInfo, hosts, path, options)
        }
    }
}

/**
 * An [ExternalDeployment] as a [UnifiedHost]: client entities get its connection string with
 * the test's URI options; before each test the runner kills all sessions over the wire
 * (`killAllSessions` on the primary, or on each mongos), after it disables the test's fail
 * points with `configureFailPoint ... mode: "off"` on every server ("Disabling Fail Points").
 * [close] leaves the deployment running: it outlives the test.
 */
class ExternalHost(private val deployment: ExternalDeployment) : UnifiedHost {
    private val parts = ConnectionStringParts.parse(deployment.uri)

    override fun uri(options: Map<String, String>, useMultipleMongoses: Boolean): String {
        val base = when (deployment.topology) {
            "load-balanced" -> ConnectionStringParts.parse(
                if (useMultipleMongoses) {
                    deployment.multiLoadBalancerUri ?: throw UnsupportedOperationException("a client with useMultipleMongoses needs MULTI_MONGOS_LB_URI")
                } else {
                    deployment.singleLoadBalancerUri ?: deployment.uri
                },
            )
            // useMultipleMongoses false: a single mongos (unified-test-format.md, entity client)
            "sharded" -> if (useMultipleMongoses) parts else parts.withHosts(parts.hosts.take(1))
            else -> parts
        }
        return base.withOptions(options).toString()
    }

    override suspend fun beforeTest() {
        val targets = if (deployment.topology == "sharded") deployment.hosts.map(::direct) else listOf(deployment.uri)
        for (target in targets) {
            runOn(target) { c ->
                try {
                    c.runCommand("admin", BsonDocument("killAllSessions", BsonArray()))
                } catch (e: MongoCommandException) {
                    // Interrupted (SERVER-38335) and Unauthorized (SERVER-54216) may be ignored ("Terminating Open Transactions")
                    if (e.code != 11601 && e.code != 13) throw e
                }
            }
        }
    }

    override suspend fun disableFailPoints(names: Set<String>) {
        if (names.isEmpty()) return
        val targets = when (deployment.topology) {
            "load-balanced" -> listOfNotNull(deployment.singleLoadBalancerUri ?: deployment.uri, deployment.multiLoadBalancerUri)
            else -> deployment.hosts.map(::direct)
        }
        for (target in targets) {
            runOn(target) { c -> names.forEach { c.runCommand("admin", BsonDocument("configureFailPoint", BsonString(it)).append("mode", BsonString("off"))) } }
        }
    }

    /** A direct connection to [host] with the deployment's credentials and options. */
    private fun direct(host: String): String =
        parts.withHosts(listOf(host)).withOptions(mapOf("directConnection" to "true"), remove = setOf("replicaSet", "loadBalanced")).toString()

    private suspend fun runOn(uri: String, block: suspend (MongoCluster) -> Unit) {
        val internal = MongoCluster(MongoClusterSettings.fromUri(uri))
        try {
            block(internal)
        } finally {
            internal.closeSuspending()
        }
    }

    override fun close() = Unit
}

/** Which unified tests an [ExternalDeployment] can run, and their one-at-a-time execution. */
object ExternalRequirements {
    private val lock = Mutex()

    /**
     * Why [deployment] cannot run a test with the file's [fileReqs] and the test's [testReqs]
     * runOnRequirements, or null when it meets both. A requirement of an authentication
     * mechanism (MONGODB-OIDC) is the in-process hook of [UnifiedHost.Oidc]: the test kit's
     * identity provider issues the token the runner hands the driver.
     */
    fun unmet(deployment: ExternalDeployment, fileReqs: List<JsonObject>?, testReqs: List<JsonObject>?): String? {
        val met = { reqs: List<JsonObject>? -> satisfies(reqs, deployment.topology, deployment.auth, null, deployment.version) }
        if (met(fileReqs) && met(testReqs)) return null
        val unmet = if (!met(fileReqs)) fileReqs!! else testReqs!!
        if (unmet.all(::needsCsfle)) return KnownGaps.missingFeature("runOnRequirements", "csfle")
        if (unmet.all { it.containsKey("authMechanism") }) {
            return "needs ${unmet.map { it["authMechanism"]!!.jsonPrimitive.content }.distinct().joinToString("/")} authentication with the " +
                "test kit's in-process identity provider (UnifiedHost.Oidc issues the token it hands the driver), which an external deployment does not give the runner"
        }
        return "needs runOnRequirements $unmet, which the external deployment ($deployment) does not meet"
    }

    /** Runs [test] alone: the tests of every suite share the external deployment (its fail points and collections). */
    suspend fun oneAtATime(test: suspend () -> Unit) = lock.withLock { test() }
}
