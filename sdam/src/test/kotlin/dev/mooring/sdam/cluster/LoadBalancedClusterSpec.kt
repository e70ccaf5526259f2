package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlin.time.Duration.Companion.seconds
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.types.ObjectId

/** Load-balanced mode against a WireServer that answers hello as a server behind a load balancer. */
class LoadBalancedClusterSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    test("no monitors, one LoadBalancer server with a ready pool, and a network error clears only that service") {
        val server = WireServer.start()
        val serviceId = ObjectId()
        server.handler = { ctx, _, cmd ->
            if (ctx.commandName == "hello" || ctx.commandName.equals("isMaster", ignoreCase = true)) {
                Reply.Document(DefaultHello.standalone(ctx, cmd).append("serviceId", org.bson.BsonObjectId(serviceId)).append("msg", BsonString("isdbgrid")))
            } else {
                null
            }
        }
        try {
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?loadBalanced=true"), listOf(recorder))
            try {
                val t = cluster.topology.value
                t.type shouldBe TopologyType.LOAD_BALANCED
                t.servers.values.single().type shouldBe ServerType.LOAD_BALANCER
                cluster.runCommand("admin", ping()).getInt32("ok").value shouldBe 1
                server.configureFailPoint(BsonDocument.parse("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["ping"], closeConnection: true}}"""))
                shouldThrow<MongoNetworkException> { cluster.runCommand("admin", ping()) }
                val cleared = recorder.ofType<PoolClearedEvent>().single()
                cleared.serviceId shouldBe serviceId
                cluster.topology.value.servers.values.single().type shouldBe ServerType.LOAD_BALANCER
                cluster.runCommand("admin", ping()).getInt32("ok").value shouldBe 1
                recorder.ofType<ServerHeartbeatStartedEvent>() shouldBe emptyList()
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        } finally {
            server.close()
        }
    }
})
