package dev.mooring.sdam.metrics

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCluster
import io.kotest.assertions.nondeterministic.eventually
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.micrometer.core.instrument.Tag
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class MooringMetricsSpec : FunSpec({

    fun startServer(): MongoServer = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) }

    fun cluster(port: Int, events: MutableList<MooringEvent>): MongoCluster = MongoCluster {
        hosts("127.0.0.1:$port")
        directConnection = true
        heartbeatFrequencyMS = 500
        serverSelectionTimeoutMS = 2_000
    }.also { c -> c.addListener(EventListener { events += it }) }

    test("gauges read the pool state; the checkout timer and the created counter follow the events") {
        val server = startServer()
        val events = CopyOnWriteArrayList<MooringEvent>()
        val cluster = cluster(server.localAddress.port, events)
        val registry = SimpleMeterRegistry()
        val address = ServerAddress("127.0.0.1", server.localAddress.port)
        try {
            val metrics = MooringMetrics(cluster, listOf(Tag.of("app", "spec")))
            metrics.bindTo(registry)
            coroutineScope {
                (1..8).map { async { repeat(5) { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) } } }.awaitAll()
            }
            val server = address.toString()
            val checkedOut = events.filterIsInstance<ConnectionCheckedOutEvent>().size.toLong()
            checkedOut shouldBeGreaterThan 0
            val timer = registry.get(MooringMetrics.CHECKOUT_WAIT).tags("server", server, "app", "spec").timer()
            timer.count() shouldBe checkedOut
            val created = events.filterIsInstance<ConnectionCreatedEvent>().size.toDouble()
            registry.get(MooringMetrics.CREATED).tags("server", server).counter().count() shouldBe created

            val stats = cluster.poolStatistics().getValue(address)
            stats.inUseConnections shouldBe 0
            fun gauge(state: String) = registry.get(MooringMetrics.CONNECTIONS).tags("server", server, "state", state).gauge().value()
            gauge("total") shouldBe stats.totalConnections.toDouble()
            gauge("total") shouldBeGreaterThan 0.0
            gauge("available") shouldBe stats.availableConnections.toDouble()
            gauge("inUse") shouldBe 0.0
            registry.get(MooringMetrics.WAIT_QUEUE).tags("server", server).gauge().value() shouldBe 0.0

            // the gauges follow the pool: a connection held by an operation is in use
            cluster.withConnection { gauge("inUse") shouldBe 1.0 }

            metrics.close()
            gauge("total").isNaN() shouldBe true
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }

    test("a server going away clears its pool: the clears counter counts it") {
        val server = startServer()
        val events = CopyOnWriteArrayList<MooringEvent>()
        val cluster = cluster(server.localAddress.port, events)
        val registry = SimpleMeterRegistry()
        val address = ServerAddress("127.0.0.1", server.localAddress.port).toString()
        try {
            MooringMetrics(cluster).bindTo(registry)
            cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
            server.shutdownNow()
            eventually(10.seconds) {
                val clears = events.filterIsInstance<PoolClearedEvent>().size.toDouble()
                clears shouldBeGreaterThan 0.0
                registry.find(MooringMetrics.CLEARS).tags("server", address).counter()?.count() shouldBe clears
            }
        } finally {
            cluster.closeSuspending()
        }
    }

    test("checkout failures are counted by reason, per registry") {
        val server = startServer()
        val events = CopyOnWriteArrayList<MooringEvent>()
        val cluster = cluster(server.localAddress.port, events)
        val a = SimpleMeterRegistry()
        val b = SimpleMeterRegistry()
        val address = ServerAddress("127.0.0.1", server.localAddress.port)
        try {
            val metrics = MooringMetrics(cluster)
            metrics.bindTo(a)
            metrics.bindTo(b)
            metrics.record(ConnectionCheckOutFailedEvent(address, ConnectionCheckOutFailedReason.TIMEOUT, 5.milliseconds))
            metrics.record(ConnectionCheckOutFailedEvent(address, ConnectionCheckOutFailedReason.TIMEOUT, 7.milliseconds))
            metrics.record(ConnectionCheckOutFailedEvent(address, ConnectionCheckOutFailedReason.CONNECTION_ERROR, 1.milliseconds))
            for (registry in listOf(a, b)) {
                registry.get(MooringMetrics.CHECKOUT_FAILURES).tags("server", address.toString(), "reason", "timeout").counter().count() shouldBe 2.0
                registry.get(MooringMetrics.CHECKOUT_FAILURES).tags("server", address.toString(), "reason", "connectionError").counter().count() shouldBe 1.0
                registry.find(MooringMetrics.CHECKOUT_FAILURES).tags("reason", "poolClosed").counter() shouldBe null
            }
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }
})
