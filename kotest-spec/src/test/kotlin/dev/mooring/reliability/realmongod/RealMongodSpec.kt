package dev.mooring.reliability.realmongod

import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.events.MooringException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.testkit.EventRecorder
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.testcontainers.DockerClientFactory
import org.testcontainers.containers.MongoDBContainer

/**
 * Real mongod: a standalone and a single-node replica set (testcontainers), or the server that
 * `MONGODB_URI` names. Without either, every test is skipped with one line saying why.
 */
class RealMongodSpec : FunSpec({
    timeout = 300.seconds.inWholeMilliseconds

    val explicitUri = System.getenv("MONGODB_URI")?.takeIf { it.isNotBlank() }
    // ask testcontainers only when a Docker endpoint may exist: its probe logs pages of errors otherwise
    val docker = explicitUri == null && dockerEndpointConfigured() &&
        runCatching { DockerClientFactory.instance().isDockerAvailable }.getOrDefault(false)
    val skipReason = when {
        explicitUri != null || docker -> null
        else -> "RealMongodSpec skipped: no Docker engine for testcontainers and MONGODB_URI is not set"
    }
    if (skipReason != null) println(skipReason)

    test("MONGODB_URI: handshake, commands and pool events").config(enabled = explicitUri != null) {
        exercise(explicitUri!!, expectReplicaSet = null)
    }

    test("testcontainers standalone mongod: handshake, commands and pool events").config(enabled = docker) {
        MongoDBContainer("mongo:7.0").withCommand("--bind_ip_all").use { c ->
            c.start()
            exercise("mongodb://${c.host}:${c.firstMappedPort}/?directConnection=true", expectReplicaSet = false)
        }
    }

    test("testcontainers single-node replica set: handshake, commands, pool events and replSetStepDown").config(enabled = docker) {
        // MongoDBContainer runs a single-node replica set "docker-rs" by default
        MongoDBContainer("mongo:7.0").use { c ->
            c.start()
            exercise(c.replicaSetUrl + "?directConnection=true", expectReplicaSet = true)
        }
    }
})

/** True when DOCKER_HOST is set, a Docker socket exists, or testcontainers is configured in ~/.testcontainers.properties. */
private fun dockerEndpointConfigured(): Boolean {
    if (!System.getenv("DOCKER_HOST").isNullOrBlank()) return true
    val home = System.getProperty("user.home")
    val candidates = listOf("/var/run/docker.sock", "$home/.docker/run/docker.sock", "$home/.docker/desktop/docker.sock", "$home/.testcontainers.properties")
    return candidates.any { java.io.File(it).exists() }
}

private suspend fun exercise(uri: String, expectReplicaSet: Boolean?) {
    val recorder = EventRecorder()
    val settings = MongoClusterSettings.fromUri(uri)
    val cluster = MongoCluster(settings, listOf(recorder))
    try {
        val t = withTimeout(30.seconds) { cluster.topology.first { d -> d.servers.values.any { it.type != ServerType.UNKNOWN } } }
        val server = t.servers.values.first { it.type != ServerType.UNKNOWN }
        (server.maxWireVersion) shouldBeGreaterThan 0
        if (expectReplicaSet == true) server.setName shouldNotBe null
        if (expectReplicaSet == false) t.type shouldBe TopologyType.SINGLE

        // commands
        cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))["ok"]!!.asNumber().doubleValue() shouldBe 1.0
        runCatching { cluster.runCommand("mooring_it", BsonDocument("drop", BsonString("c"))) } // NamespaceNotFound on a fresh server
        coroutineScope {
            (1..32).map { i ->
                async { cluster.runCommand("mooring_it", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("i", BsonInt32(i)))))) }
            }.awaitAll()
        }
        val count = cluster.runCommand("mooring_it", BsonDocument("count", BsonString("c")))
        (count["n"]!!.asNumber().intValue() >= 32) shouldBe true

        // pool events
        recorder.ofType<PoolCreatedEvent>().size shouldBeGreaterThan 0
        recorder.ofType<PoolReadyEvent>().size shouldBeGreaterThan 0
        recorder.ofType<ConnectionCreatedEvent>().size shouldBeGreaterThan 0
        recorder.ofType<ConnectionReadyEvent>().size shouldBeGreaterThan 0
        recorder.ofType<ConnectionCheckedOutEvent>().size shouldBe recorder.ofType<ConnectionCheckedInEvent>().size

        if (expectReplicaSet == true) {
            // step down: a single-node set re-elects itself after the stepdown period
            runCatching { cluster.runCommand("admin", BsonDocument("replSetStepDown", BsonInt32(1)).append("force", org.bson.BsonBoolean.TRUE)) }
            withTimeout(60.seconds) {
                while (true) {
                    val ok = try {
                        cluster.runCommand("mooring_it", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("after", BsonInt32(1))))))
                        true
                    } catch (e: MooringException) {
                        false
                    }
                    if (ok) break
                    delay(200)
                }
            }
            cluster.topology.value.servers.values.any { it.type == ServerType.RS_PRIMARY } shouldBe true
        }
    } finally {
        cluster.closeSuspending()
    }
}
