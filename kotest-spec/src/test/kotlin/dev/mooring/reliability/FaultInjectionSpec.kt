package dev.mooring.reliability

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.proxy.Direction
import dev.mooring.testkit.proxy.Fault
import dev.mooring.testkit.proxy.FaultProxy
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import kotlinx.coroutines.debug.DebugProbes
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/**
 * Fault injection: for each fault, 256 concurrent operations against the test-kit replica set
 * and against mongo-java-server. See [runFaultScenario] for what every run checks. The
 * observations go to target/reliability-report.md.
 *
 * Timeouts used: socketTimeoutMS=500, connectTimeoutMS=1000 (also the monitors' read timeout),
 * serverSelectionTimeoutMS=2000, heartbeatFrequencyMS=500, maxPoolSize=50.
 */
class FaultInjectionSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds

    beforeSpec {
        resetFaultReport()
        DebugProbes.enableCreationStackTraces = true
        DebugProbes.install()
    }
    afterSpec { DebugProbes.uninstall() }

    // --- the test-kit replica set (3 members, full discovery) ---

    test("replica set: primary killed, then restarted and re-elected") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val primary = rs.primary!!
            runFaultScenario(
                "replica set", rsSettings(rs),
                FaultRecipe("server killed", inject = { rs.kill(primary) }, lift = { rs.restart(primary); rs.elect(primary) }),
                serverDescriptorAllowance = 1, // the restarted member's new listening socket
            )
        }
    }

    test("replica set: primary blackholed (accepts, never answers), then healed") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val primary = rs.primary!!
            runFaultScenario(
                "replica set", rsSettings(rs),
                FaultRecipe("blackholed", inject = { rs.partition(primary) }, lift = { rs.heal(primary) }),
            )
        }
    }

    test("replica set: primary slower than socketTimeoutMS (blockConnection 1500 ms on insert), then normal") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val primary = rs.primary!!
            runFaultScenario(
                "replica set", rsSettings(rs),
                FaultRecipe(
                    "slower than socketTimeoutMS",
                    inject = { primary.configureFailPoint(blockInserts(1500)) },
                    lift = { primary.clearFailPoint() },
                ),
            )
        }
    }

    test("replica set: primary stepped down, then another member elected") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val next = rs.members[1]
            runFaultScenario(
                "replica set", rsSettings(rs),
                FaultRecipe("primary stepped down", inject = { rs.stepDown() }, lift = { rs.elect(next) }),
            )
        }
    }

    test("replica set: replies from the primary reset mid-message (through the proxy, directConnection), then clean") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            FaultProxy.start(ServerAddress.parse(rs.primary!!.host)).use { proxy ->
                // members advertise their own addresses, so a proxy can only sit in front of a direct connection
                val settings = MongoClusterSettings.fromUri("mongodb://${proxy.address}/?directConnection=true&$COMMON")
                runFaultScenario(
                    "replica set (direct to primary)", settings,
                    FaultRecipe(
                        "reset mid-reply",
                        inject = { proxy[Direction.DOWNSTREAM] = Fault.CloseAfterBytes(20) },
                        lift = { proxy.heal() },
                    ),
                )
            }
        }
    }

    // --- mongo-java-server behind the fault proxy ---

    test("mongo-java-server: server killed (process stops, connections drop), then started again on the same port") {
        var server = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) }
        val port = server.localAddress.port
        try {
            FaultProxy.start(ServerAddress("127.0.0.1", port)).use { proxy ->
                runFaultScenario(
                    "mongo-java-server", mjsSettings(proxy),
                    FaultRecipe(
                        "server killed",
                        inject = { server.shutdownNow(); proxy.resetAll() },
                        lift = { server = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", port) } },
                    ),
                )
            }
        } finally {
            server.shutdownNow()
        }
    }

    test("mongo-java-server: blackholed by the proxy, then healed") {
        withMongoJavaServer { proxy ->
            runFaultScenario(
                "mongo-java-server", mjsSettings(proxy),
                FaultRecipe("blackholed", inject = { proxy.setBoth(Fault.Blackhole) }, lift = { proxy.heal() }),
            )
        }
    }

    test("mongo-java-server: replies reset after 20 bytes, then clean") {
        withMongoJavaServer { proxy ->
            runFaultScenario(
                "mongo-java-server", mjsSettings(proxy),
                FaultRecipe("reset mid-reply", inject = { proxy[Direction.DOWNSTREAM] = Fault.CloseAfterBytes(20) }, lift = { proxy.heal() }),
            )
        }
    }

    test("mongo-java-server: replies delayed 800 ms (> socketTimeoutMS 500, < monitor timeout 1000), then normal") {
        withMongoJavaServer { proxy ->
            // every timed-out operation closes its connection (its wire state is unknown), so each
            // retry needs a new 800 ms handshake: maxConnecting=50 lets them run side by side
            runFaultScenario(
                "mongo-java-server", mjsSettings(proxy, "&maxConnecting=50"),
                FaultRecipe("slower than socketTimeoutMS", inject = { proxy[Direction.DOWNSTREAM] = Fault.Latency(800) }, lift = { proxy.heal() }),
            )
        }
    }
    // "primary stepped down" has no mongo-java-server counterpart: it is a standalone without replica sets.
})

private const val COMMON = "heartbeatFrequencyMS=500&serverSelectionTimeoutMS=2000&socketTimeoutMS=500&connectTimeoutMS=1000&maxPoolSize=50"

private fun rsSettings(rs: ReplicaSetSimulator): MongoClusterSettings = MongoClusterSettings.fromUri(rs.seedUri(COMMON))

private fun mjsSettings(proxy: FaultProxy, extra: String = ""): MongoClusterSettings =
    MongoClusterSettings.fromUri("mongodb://${proxy.address}/?directConnection=true&$COMMON$extra")

private suspend fun withMongoJavaServer(block: suspend (FaultProxy) -> Unit) {
    val server = MongoServer(MemoryBackend())
    server.bind("127.0.0.1", 0)
    try {
        FaultProxy.start(ServerAddress("127.0.0.1", server.localAddress.port)).use { block(it) }
    } finally {
        server.shutdownNow()
    }
}

/** failCommand: every insert blocks [millis] before its reply. */
private fun blockInserts(millis: Int): BsonDocument =
    BsonDocument("configureFailPoint", BsonString("failCommand"))
        .append("mode", BsonString("alwaysOn"))
        .append(
            "data",
            BsonDocument("failCommands", BsonArray(listOf(BsonString("insert"))))
                .append("blockConnection", BsonBoolean.TRUE)
                .append("blockTimeMS", BsonInt32(millis)),
        )
