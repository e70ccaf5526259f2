package dev.mooring.sdam.topology

import dev.mooring.cmap.ConnectionPoolState
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.ApplicationErrorKind
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.TopologyVersion
import dev.mooring.sdam.internal.topology.CheckOutcomeSink
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.sdam.internal.topology.MonitorFactory
import dev.mooring.sdam.internal.topology.MonitorHandle
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.types.ObjectId
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** A monitor the test drives by hand: it counts the topology's requests and delivers scripted outcomes. */
internal class ScriptedMonitor(val address: ServerAddress, val sink: CheckOutcomeSink) : MonitorHandle {
    val starts = AtomicInteger()
    val immediateChecks = AtomicInteger()
    val cancels = AtomicInteger()
    val closes = AtomicInteger()
    override fun start() { starts.incrementAndGet() }
    override fun requestImmediateCheck() { immediateChecks.incrementAndGet() }
    override fun cancelCheck() { cancels.incrementAndGet() }
    override suspend fun close() { closes.incrementAndGet() }

    suspend fun report(d: ServerDescription, error: Throwable? = null, clear: Boolean = false, interrupt: Boolean = false) =
        sink.onCheckOutcome(d, error, clear, interrupt)
}

internal class ScriptedMonitors : MonitorFactory {
    val byAddress = ConcurrentHashMap<ServerAddress, ScriptedMonitor>()
    override fun create(address: ServerAddress, scope: kotlinx.coroutines.CoroutineScope, sink: CheckOutcomeSink): MonitorHandle =
        ScriptedMonitor(address, sink).also { byAddress[address] = it }
    operator fun get(a: ServerAddress): ScriptedMonitor = byAddress.getValue(a)
}

/** The live topology's critical section, driven by scripted monitors (no sockets). */
class ScriptedTopologySpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val a = ServerAddress("127.0.0.1", 1)
    val b = ServerAddress("127.0.0.1", 2)

    fun standalone(address: ServerAddress, tv: TopologyVersion? = null) =
        ServerDescription(address, ServerType.STANDALONE, maxWireVersion = 21, roundTripTimeMillis = 1.0, topologyVersion = tv)

    fun cluster(uri: String, monitors: ScriptedMonitors, recorder: EventRecorder, extra: (MooringEvent) -> Unit = {}): MongoCluster =
        ClusterInternals.create(MongoClusterSettings.fromUri(uri), monitors, listOf(recorder, dev.mooring.events.EventListener { extra(it) }))

    test("a usable server's pool is ready before the description that makes it selectable is published") {
        val monitors = ScriptedMonitors()
        val recorder = EventRecorder()
        lateinit var c: MongoCluster
        val poolStatesSeen = ArrayList<ConnectionPoolState?>()
        c = cluster("mongodb://$a/?serverSelectionTimeoutMS=2000", monitors, recorder) { e ->
            if (e is ServerDescriptionChangedEvent && e.newDescription.type == ServerType.STANDALONE) {
                poolStatesSeen += ClusterInternals.topology(c).pool(a)?.state
                // The StateFlow already holds it, and the pool serving it is ready.
                c.topology.value.servers.getValue(a).type shouldBe ServerType.STANDALONE
            }
        }
        try {
            monitors[a].starts.get() shouldBe 1
            monitors[a].report(standalone(a))
            poolStatesSeen shouldContainExactly listOf(ConnectionPoolState.READY)
            c.topology.value.type shouldBe TopologyType.SINGLE
        } finally {
            c.closeAndCheckNoCoroutines()
        }
        monitors[a].closes.get() shouldBe 1
    }

    test("a failed check clears the pool (interrupting in-use connections on a timeout) together with marking the server Unknown") {
        val monitors = ScriptedMonitors()
        val recorder = EventRecorder()
        val c = cluster("mongodb://$a/", monitors, recorder)
        try {
            monitors[a].report(standalone(a))
            val timeout = MongoNetworkTimeoutException("hello timed out", a)
            monitors[a].report(ServerDescription.unknown(a, timeout.toString()), timeout, clear = true, interrupt = true)
            val relevant = recorder.events.filter { it is PoolClearedEvent || (it is ServerDescriptionChangedEvent && it.newDescription.type == ServerType.UNKNOWN) }
            relevant.size shouldBe 2
            // server-monitoring.md: the pool is cleared only after the description is set to Unknown.
            relevant[0].shouldBeInstanceOf<ServerDescriptionChangedEvent>()
            relevant[1].shouldBeInstanceOf<PoolClearedEvent>().interruptInUseConnections shouldBe true
            c.poolStatistics().getValue(a).generation shouldBe 1
            c.poolStatistics().getValue(a).state shouldBe ConnectionPoolState.PAUSED
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }

    test("application errors: NotWritablePrimary asks that server's monitor for an immediate check; a network error cancels its check; stale ones do nothing") {
        val monitors = ScriptedMonitors()
        val recorder = EventRecorder()
        val c = cluster("mongodb://$a/", monitors, recorder)
        try {
            val tv1 = TopologyVersion(ObjectId(), 1)
            monitors[a].report(standalone(a, tv1))
            val live = ClusterInternals.topology(c)
            // Stale: the same topologyVersion as the server's.
            live.onApplicationError(ApplicationError(a, ApplicationErrorKind.COMMAND, code = 10107, topologyVersion = tv1))
            c.topology.value.servers.getValue(a).type shouldBe ServerType.STANDALONE
            monitors[a].immediateChecks.get() shouldBe 0
            // Newer: Unknown, immediate check, pool kept.
            live.onApplicationError(ApplicationError(a, ApplicationErrorKind.COMMAND, code = 10107, topologyVersion = TopologyVersion(tv1.processId, 2)))
            c.topology.value.servers.getValue(a).type shouldBe ServerType.UNKNOWN
            monitors[a].immediateChecks.get() shouldBe 1
            c.poolStatistics().getValue(a).generation shouldBe 0
            monitors[a].report(standalone(a, TopologyVersion(tv1.processId, 3)))
            // A network error after the handshake: Unknown, pool cleared, the monitor's check cancelled.
            live.onApplicationError(a, MongoNetworkException("connection reset", a, generation = 0))
            monitors[a].cancels.get() shouldBe 1
            c.poolStatistics().getValue(a).generation shouldBe 1
            // The same error again is stale now (generation 0 < 1).
            monitors[a].report(standalone(a, TopologyVersion(tv1.processId, 4)))
            live.onApplicationError(a, MongoNetworkException("late reset", a, generation = 0))
            c.topology.value.servers.getValue(a).type shouldBe ServerType.STANDALONE
            c.poolStatistics().getValue(a).generation shouldBe 1
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }

    test("a removed server's monitor and pool are closed and its late outcomes are ignored") {
        val monitors = ScriptedMonitors()
        val recorder = EventRecorder()
        val c = cluster("mongodb://$a,$b/?replicaSet=rs0", monitors, recorder)
        try {
            fun primary(hosts: Set<ServerAddress>) = ServerDescription(
                a, ServerType.RS_PRIMARY, maxWireVersion = 21, me = a, hosts = hosts, setName = "rs0",
                electionId = ObjectId("000000000000000000000001"), setVersion = 1, primary = a, roundTripTimeMillis = 1.0,
            )
            monitors[b].report(ServerDescription(b, ServerType.RS_SECONDARY, maxWireVersion = 21, me = b, hosts = setOf(a, b), setName = "rs0", primary = a))
            c.poolStatistics().keys shouldBe setOf(b)
            monitors[a].report(primary(setOf(a)))
            c.topology.value.servers.keys shouldBe setOf(a)
            recorder.ofType<ServerClosedEvent>().map { it.address } shouldBe listOf(b)
            kotlinx.coroutines.withTimeout(10.seconds) {
                while (monitors[b].closes.get() == 0 || recorder.ofType<PoolClosedEvent>().none { it.address == b }) kotlinx.coroutines.delay(10)
            }
            val before = c.topology.value
            monitors[b].report(ServerDescription(b, ServerType.RS_SECONDARY, maxWireVersion = 21, me = b, hosts = setOf(a, b), setName = "rs0", primary = a))
            c.topology.value shouldBe before
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }

    test("while nothing is suitable, selection requests immediate checks and then times out describing the topology") {
        val monitors = ScriptedMonitors()
        val c = cluster("mongodb://$a/?serverSelectionTimeoutMS=700", monitors, EventRecorder())
        try {
            val e = shouldThrow<MongoServerSelectionTimeoutException> { c.runCommand("admin", ping()) }
            (monitors[a].immediateChecks.get() >= 1) shouldBe true
            e.topology.type shouldBe TopologyType.UNKNOWN
        } finally {
            c.closeAndCheckNoCoroutines()
        }
    }
})
