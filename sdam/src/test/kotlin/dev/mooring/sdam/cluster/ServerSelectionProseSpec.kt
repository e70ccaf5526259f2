package dev.mooring.sdam.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.shouldBeBetween
import io.kotest.matchers.doubles.shouldBeLessThan
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * The server-selection-tests.md prose test for multi-threaded drivers: operationCount-based
 * selection within the latency window, on the test kit's two mongos routers. (The
 * application-provided server selector tests do not apply: Mooring has no such hook.)
 */
class ServerSelectionProseSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds

    fun findOne() = BsonDocument("find", BsonString("c")).append("filter", BsonDocument()).append("limit", BsonInt32(1))

    test("server selection prose: operationCount-based selection within the latency window avoids the busy mongos, then balances") {
        ShardedClusterSimulator.start(2).use { sharded ->
            val slow = sharded.mongoses[0]
            slow.configureFailPoint(
                BsonDocument.parse(
                    """{configureFailPoint: "failCommand", mode: {times: 10000}, data: {failCommands: ["find"], blockConnection: true, blockTimeMS: 500, appName: "loadBalancingTest"}}""",
                ),
            )
            val recorder = EventRecorder()
            val uri = sharded.seedUri("appName=loadBalancingTest&localThresholdMS=30000&minPoolSize=10&maxPoolSize=10", multiple = true)
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri), listOf(recorder))
            try {
                cluster.awaitTopology { t -> t.servers.values.count { it.type == ServerType.MONGOS } == 2 }
                // both pools saturated (minPoolSize = maxPoolSize) before measuring
                withTimeout(30.seconds) { while (recorder.ofType<ConnectionCreatedEvent>().size < 20) delay(20) }
                suspend fun run(tasks: Int, each: Int) = coroutineScope {
                    (1..tasks).map { async { repeat(each) { cluster.runCommand("db", findOne()) } } }.awaitAll()
                }
                fun shareOf(address: dev.mooring.events.ServerAddress): Double {
                    val started = recorder.ofType<CommandStartedEvent>().filter { it.commandName == "find" }
                    return started.count { it.address == address }.toDouble() / started.size
                }
                run(10, 10)
                shareOf(slow.address) shouldBeLessThan 0.25
                slow.clearFailPoint()
                recorder.clear()
                run(10, 100)
                shareOf(slow.address).shouldBeBetween(0.40, 0.60, 0.0)
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})
