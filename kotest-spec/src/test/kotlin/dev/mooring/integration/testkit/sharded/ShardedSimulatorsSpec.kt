package dev.mooring.integration.testkit.sharded

import dev.mooring.testkit.sharded.LoadBalancerSimulator
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeIn
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/** The test kit's mongos and load balancer simulators as Mooring sees them, and SCRAM fail points during the handshake. */
class ShardedSimulatorsSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val ping = BsonDocument("ping", BsonInt32(1))

    test("a sharded cluster of simulated mongoses is discovered as Sharded with every router a Mongos") {
        ShardedClusterSimulator.start(3).use { sc ->
            MongoCluster(MongoClusterSettings.fromUri(sc.seedUri(multiple = true))).use { cluster ->
                val d = withTimeout(10.seconds) {
                    cluster.topology.first { t -> t.servers.size == 3 && t.servers.values.all { it.type == ServerType.MONGOS } }
                }
                d.type shouldBe TopologyType.SHARDED
                cluster.runCommand("admin", ping).getInt32("ok").value shouldBe 1
            }
        }
    }

    test("a load-balanced client gets a backend's serviceId in every handshake and runs commands") {
        LoadBalancerSimulator.start(backends = 2).use { lb ->
            MongoCluster(MongoClusterSettings.fromUri(lb.seedUri())).use { cluster ->
                cluster.topology.value.type shouldBe TopologyType.LOAD_BALANCED
                val sid = cluster.withConnection { it.description!!.serviceId }
                sid!! shouldBeIn lb.serviceIds
                cluster.runCommand("admin", ping).getInt32("ok").value shouldBe 1
            }
        }
    }

    test("a hello without loadBalanced: true gets no serviceId from the load balancer") {
        LoadBalancerSimulator.start().use { lb ->
            MongoCluster(MongoClusterSettings.fromUri(lb.seedUri("loadBalanced=false&directConnection=true"))).use { cluster ->
                val sid = cluster.withConnection { it.description!!.serviceId }
                sid shouldBe null
            }
        }
    }

    test("a failCommand fail point on saslContinue fails authentication during the handshake: pool cleared, server Unknown") {
        val server = WireServer.start()
        try {
            ScramServer().apply { addUser("admin", "u", "p") }.install(server)
            server.configureFailPoint(
                BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["saslContinue"], errorCode: 18, appName: "saslFp"}}"""),
            )
            val events = Collections.synchronizedList(ArrayList<MooringEvent>())
            val settings = MongoClusterSettings.fromUri("mongodb://u:p@${server.address}/?appname=saslFp")
            MongoCluster(settings, listOf(EventListener { events += it })).use { cluster ->
                shouldThrow<MongoAuthenticationException> { cluster.runCommand("db", BsonDocument("insert", BsonString("c"))) }.serverCode shouldBe 18
                val kinds = synchronized(events) { events.toList() }
                    .filter { it is PoolClearedEvent || it is ConnectionClosedEvent || (it is ServerDescriptionChangedEvent && it.newDescription.type == ServerType.UNKNOWN) }
                    .map { it::class.simpleName }
                kinds shouldBe listOf("ServerDescriptionChangedEvent", "PoolClearedEvent", "ConnectionClosedEvent")
                // the fail point fired once: the next operation authenticates
                cluster.runCommand("db", ping).getInt32("ok").value shouldBe 1
            }
        } finally {
            server.close()
        }
    }
})
