package dev.mooring.sdam.topology

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import dev.mooring.sdam.internal.topology.SelectedServer
import dev.mooring.sdam.internal.topology.ServerSelector
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.types.ObjectId
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/**
 * One pass per operation: select → check out → send → classify the error once → hand it to SDAM
 * once → check in; and the operation reads the topology type from the description its selection
 * used (server-selection.md "Passing read preference to mongos and load balancers").
 */
class OperationPassSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    // Nothing listens on port 1 of the loopback address: every connection attempt is refused.
    val refusing = ServerAddress("127.0.0.1", 1)
    val a = ServerAddress("127.0.0.1", 2)
    val b = ServerAddress("127.0.0.1", 3)

    fun cluster(uri: String, monitors: ScriptedMonitors): MongoCluster =
        ClusterInternals.create(MongoClusterSettings.fromUri(uri), monitors, listOf(EventRecorder()))

    val secondaryB = ServerDescription(b, ServerType.RS_SECONDARY, maxWireVersion = 21, me = b, hosts = setOf(a, b), setName = "rs0", primary = a, roundTripTimeMillis = 1.0)

    /** Runs [check] with a server selected for [readPreference] on [uri]'s cluster after [script]; releases and closes. */
    suspend fun selecting(uri: String, readPreference: ReadPreference, script: suspend (ScriptedMonitors) -> Unit, check: suspend (ScriptedMonitors, MongoCluster, SelectedServer) -> Unit) {
        val monitors = ScriptedMonitors()
        val c = cluster(uri, monitors)
        try {
            script(monitors)
            val selected = ServerSelector(ClusterInternals.topology(c)).select(ServerSelectionOperation.Read(readPreference), "find", 5_000)
            try {
                check(monitors, c, selected)
            } finally {
                selected.release()
            }
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }

    test("an establishment error reaches SDAM exactly once: from the pool, not again from the checkout that received it") {
        val monitors = ScriptedMonitors()
        val recorder = EventRecorder()
        val c = ClusterInternals.create(MongoClusterSettings.fromUri("mongodb://$refusing/?serverSelectionTimeoutMS=1000"), monitors, listOf(recorder))
        try {
            monitors[refusing].report(ServerDescription(refusing, ServerType.STANDALONE, maxWireVersion = 21, roundTripTimeMillis = 1.0))
            val reported = AtomicInteger()
            ClusterInternals.topology(c).errorReportProbe = { reported.incrementAndGet() }
            shouldThrow<MongoNetworkException> { c.runCommand("admin", ping()) }
            // Each attempt (a refused connection is an overload error, retried by client-backpressure.md)
            // established one connection, and each establishment error was reported once.
            val establishments = recorder.ofType<ConnectionCreatedEvent>().size
            (establishments >= 1) shouldBe true
            recorder.ofType<ConnectionCheckOutFailedEvent>().size shouldBe establishments
            reported.get() shouldBe establishments
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }

    test("the selected server carries the topology description its selection used; the \$readPreference is built from that type, not the live one") {
        val primaryA = ServerDescription(
            a, ServerType.RS_PRIMARY, maxWireVersion = 21, me = a, hosts = setOf(a, b), setName = "rs0",
            electionId = ObjectId("000000000000000000000001"), setVersion = 1, primary = a, roundTripTimeMillis = 1.0,
        )
        selecting("mongodb://$a,$b/?replicaSet=rs0&serverSelectionTimeoutMS=5000", ReadPreference.SECONDARY, { m ->
            m[a].report(primaryA)
            m[b].report(secondaryB)
        }) { monitors, c, selected ->
            selected.description.address shouldBe b
            selected.topology.type shouldBe TopologyType.REPLICA_SET_WITH_PRIMARY
            // The live description changes after the selection (the primary's check fails) ...
            val timeout = MongoNetworkTimeoutException("hello timed out", a)
            monitors[a].report(ServerDescription.unknown(a, timeout.toString()), timeout, clear = true)
            c.topology.value.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
            // ... but the operation keeps the description it selected from.
            selected.topology.type shouldBe TopologyType.REPLICA_SET_WITH_PRIMARY
            selected.topology.servers.getValue(b) shouldBe selected.description
            val sent = ReadPreferenceCommand.withReadPreference(BsonDocument("find", BsonString("c")), ReadPreference.SECONDARY, selected.topology.type, selected.description)
            sent.getDocument("\$readPreference").getString("mode").value shouldBe "secondary"
        }
    }

    test("a direct connection sends primaryPreferred to a secondary because the selection's topology is Single") {
        selecting("mongodb://$b/?directConnection=true&serverSelectionTimeoutMS=5000", ReadPreference.PRIMARY, { m -> m[b].report(secondaryB) }) { _, _, selected ->
            selected.topology.type shouldBe TopologyType.SINGLE
            val rp = ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, selected.topology.type, selected.description)
            rp.shouldBeInstanceOf<BsonDocument>().getString("mode").value shouldBe "primaryPreferred"
        }
    }
})
