package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.SimulatedMember
import com.mongodb.ConnectionString
import com.mongodb.MongoClientSettings
import com.mongodb.ReadPreference
import com.mongodb.client.MongoClient
import com.mongodb.client.MongoClients
import com.mongodb.connection.ClusterDescription
import com.mongodb.connection.ServerConnectionState
import com.mongodb.connection.ServerType
import com.mongodb.event.ClusterDescriptionChangedEvent
import com.mongodb.event.ClusterListener
import com.mongodb.event.ServerHeartbeatSucceededEvent
import com.mongodb.event.ServerMonitorListener
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.bson.Document
import java.util.concurrent.ConcurrentLinkedQueue
import kotlin.time.Duration.Companion.seconds

/**
 * Faithfulness of the simulator: the official MongoDB Java driver (sync, 5.6) must discover the
 * simulated set from one seed and follow a failover, with streaming and with polling monitors.
 */
class JavaDriverFaithfulnessSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    suspend fun waitFor(what: String, client: MongoClient, condition: (ClusterDescription) -> Boolean) {
        try {
            withTimeout(20_000) {
                while (!condition(client.clusterDescription)) delay(50)
            }
        } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
            throw AssertionError("the Java driver never saw $what; last: ${client.clusterDescription.shortDescription}", e)
        }
    }

    fun primaryOf(d: ClusterDescription): String? =
        d.serverDescriptions.firstOrNull { it.type == ServerType.REPLICA_SET_PRIMARY }?.address?.toString()

    for (mode in listOf("stream", "poll")) {
        test("the Java driver discovers every member from one seed and follows a failover (serverMonitoringMode=$mode)") {
            ReplicaSetSimulator.start().use { rs ->
                val heartbeats = ConcurrentLinkedQueue<ServerHeartbeatSucceededEvent>()
                val changes = ConcurrentLinkedQueue<ClusterDescription>()
                val uri = rs.seedUri("serverSelectionTimeoutMS=20000&heartbeatFrequencyMS=500&serverMonitoringMode=$mode&appName=faithfulness")
                val settings = MongoClientSettings.builder()
                    .applyConnectionString(ConnectionString(uri))
                    .applyToServerSettings {
                        it.addServerMonitorListener(object : ServerMonitorListener {
                            override fun serverHeartbeatSucceeded(event: ServerHeartbeatSucceededEvent) {
                                heartbeats += event
                            }
                        })
                    }
                    .applyToClusterSettings {
                        it.addClusterListener(object : ClusterListener {
                            override fun clusterDescriptionChanged(event: ClusterDescriptionChangedEvent) {
                                changes += event.newDescription
                            }
                        })
                    }
                    .build()
                val (m0, m1, m2) = rs.members
                MongoClients.create(settings).use { client ->
                    withContext(Dispatchers.IO) {
                        val things = client.getDatabase("test").getCollection("things")
                        things.insertOne(Document("n", 1))
                        waitFor("all three members", client) { d ->
                            d.serverDescriptions.count { it.state == ServerConnectionState.CONNECTED } == 3
                        }
                        val d = client.clusterDescription
                        d.serverDescriptions.map { it.address.toString() } shouldContainExactlyInAnyOrder rs.hosts
                        primaryOf(d) shouldBe m0.host
                        d.serverDescriptions.filter { it.type == ServerType.REPLICA_SET_SECONDARY }.map { it.address.toString() } shouldContainExactlyInAnyOrder listOf(m1.host, m2.host)
                        d.serverDescriptions.forEach { it.setName shouldBe "rs0" }

                        rs.stepDown()
                        rs.elect(m1)
                        waitFor("${m1.host} as the new primary", client) { primaryOf(it) == m1.host }
                        things.insertOne(Document("n", 2))
                        rs.collections.documents("test", "things").size shouldBe 2
                        things.withReadPreference(ReadPreference.secondary()).find().into(ArrayList()).size shouldBe 2

                        // and back, through a kill of the new primary and an election of the restarted old one
                        rs.kill(m1)
                        rs.elect(m2)
                        waitFor("${m2.host} as primary after ${m1.host} was killed", client) { primaryOf(it) == m2.host }
                        things.insertOne(Document("n", 3))
                        rs.restart(m1)
                        waitFor("${m1.host} back as a secondary", client) { d2 ->
                            d2.serverDescriptions.any { it.address.toString() == m1.host && it.type == ServerType.REPLICA_SET_SECONDARY }
                        }
                    }
                    rs.collections.documents("test", "things").map { it.getInt32("n").value } shouldBe listOf(1, 2, 3)
                    changes.any { primaryOf(it) == m1.host } shouldBe true
                    val awaited = heartbeats.any { it.isAwaited }
                    awaited shouldBe (mode == "stream")
                }
            }
        }
    }

    fun client(rs: ReplicaSetSimulator, options: String): MongoClient =
        MongoClients.create(rs.seedUri("serverSelectionTimeoutMS=20000&heartbeatFrequencyMS=500&$options"))

    fun typeOf(d: ClusterDescription, host: String): ServerType? =
        d.serverDescriptions.firstOrNull { it.address.toString() == host }?.type

    test("the Java driver follows a reconfiguration: a new member joins, a hidden one leaves its view") {
        ReplicaSetSimulator.start().use { rs ->
            val (m0, m1, m2) = rs.members
            client(rs, "appName=reconfig").use { client ->
                withContext(Dispatchers.IO) {
                    client.getDatabase("test").getCollection("things").insertOne(Document("n", 1))
                    waitFor("three members", client) { d -> rs.hosts.all { typeOf(d, it) != null && typeOf(d, it) != ServerType.UNKNOWN } }
                    lateinit var added: SimulatedMember
                    rs.reconfigure {
                        added = addMember()
                        update(m2) { it.copy(hidden = true, priority = 0.0) }
                    }
                    waitFor("${added.host} as a secondary and ${m2.host} gone", client) { d ->
                        typeOf(d, added.host) == ServerType.REPLICA_SET_SECONDARY && typeOf(d, m2.host) == null
                    }
                    client.clusterDescription.serverDescriptions.map { it.address.toString() } shouldContainExactlyInAnyOrder
                        listOf(m0.host, m1.host, added.host)
                    client.clusterDescription.serverDescriptions.first { it.address.toString() == m0.host }.setVersion shouldBe 2
                }
            }
        }
    }

    test("the Java driver sees a partitioned member time out and come back after heal") {
        ReplicaSetSimulator.start().use { rs ->
            val m2 = rs.members[2]
            client(rs, "connectTimeoutMS=1000&appName=partition").use { client ->
                withContext(Dispatchers.IO) {
                    waitFor("${m2.host} as a secondary", client) { typeOf(it, m2.host) == ServerType.REPLICA_SET_SECONDARY }
                    rs.partition(m2)
                    waitFor("${m2.host} unknown while partitioned", client) { typeOf(it, m2.host) == ServerType.UNKNOWN }
                    rs.heal(m2)
                    waitFor("${m2.host} a secondary again after heal", client) { typeOf(it, m2.host) == ServerType.REPLICA_SET_SECONDARY }
                    client.getDatabase("test").getCollection("things").insertOne(Document("n", 1))
                }
            }
        }
    }
})
