package dev.mooring.sdam

import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
import kotlin.random.Random

class SelectionUnitSpec : FunSpec({
    val a = ServerAddress("a")
    val b = ServerAddress("b")
    val c = ServerAddress("c")
    fun mongos(addr: ServerAddress, rtt: Double) = ServerDescription(addr, ServerType.MONGOS, roundTripTimeMillis = rtt, maxWireVersion = 21)
    fun sharded(vararg s: ServerDescription) = TopologyDescription(TopologyType.SHARDED, s.associateBy { it.address })
    val read = ServerSelectionOperation.Read(ReadPreference.NEAREST)

    test("the RTT average is the first sample, then an EWMA with alpha 0.2, and rejects negative samples") {
        val avg = AverageRoundTripTime().add(10.0)
        avg.averageMillis shouldBe 10.0
        avg.add(20.0).averageMillis!! shouldBe (12.0 plusOrMinus 1e-12)
        avg.reset().averageMillis shouldBe null
        shouldThrow<IllegalArgumentException> { avg.add(-1.0) }
    }

    test("the minimum RTT is 0 until two samples and covers only the last ten") {
        var m = MinimumRoundTripTime().add(5.0)
        m.minimumMillis shouldBe 0.0
        m = m.add(7.0)
        m.minimumMillis shouldBe 5.0
        repeat(10) { m = m.add(9.0) }
        m.sampleCount shouldBe 10
        m.minimumMillis shouldBe 9.0
    }

    test("the latency window is anchored at the fastest suitable server") {
        val td = sharded(mongos(a, 5.0), mongos(b, 20.0), mongos(c, 20.1))
        val window = ServerSelection.latencyWindow(ServerSelection.suitableServers(td, read), 15)
        window.map { it.address } shouldBe listOf(a, b)
    }

    test("in-window choice takes the less busy of two distinct random servers") {
        val window = listOf(mongos(a, 1.0), mongos(b, 1.0))
        repeat(50) {
            ServerSelection.chooseInWindow(window, { if (it == a) 10 else 0 }, Random(it))!!.address shouldBe b
        }
        ServerSelection.chooseInWindow(emptyList(), { 0 }, Random(1)) shouldBe null
    }

    test("deprioritized servers are used only when nothing else is suitable") {
        val td = sharded(mongos(a, 1.0), mongos(b, 1.0))
        ServerSelection.suitableServers(td, ServerSelectionOperation.Write, deprioritized = setOf(a)).map { it.address } shouldBe listOf(b)
        ServerSelection.suitableServers(td, ServerSelectionOperation.Write, deprioritized = setOf(a, b)).map { it.address } shouldBe listOf(a, b)
    }

    test("maxStalenessSeconds is validated against heartbeatFrequencyMS and the smallest allowed value in replica sets only") {
        val p = ServerDescription(a, ServerType.RS_PRIMARY, maxWireVersion = 21)
        val rs = TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(a to p))
        val rp = ServerSelectionOperation.Read(ReadPreference(ReadPreferenceMode.SECONDARY_PREFERRED, maxStalenessSeconds = 89))
        shouldThrow<InvalidReadPreferenceException> { ServerSelection.suitableServers(rs, rp, 10_000) }
        val rp2 = ServerSelectionOperation.Read(ReadPreference(ReadPreferenceMode.SECONDARY_PREFERRED, maxStalenessSeconds = 100))
        shouldThrow<InvalidReadPreferenceException> { ServerSelection.suitableServers(rs, rp2, 95_000) }
        ServerSelection.suitableServers(rs, rp2, 10_000).map { it.address } shouldBe listOf(a)
        ServerSelection.suitableServers(sharded(mongos(b, 1.0)), rp, 10_000).map { it.address } shouldBe listOf(b)
    }

    test("an incompatible topology raises at once") {
        val old = ServerDescription(a, ServerType.MONGOS, maxWireVersion = 2)
        shouldThrow<MongoIncompatibleServerException> { ServerSelection.suitableServers(sharded(old), read) }.address shouldBe a
    }

    test("staleness with and without a primary follows the max staleness formulas") {
        val p = ServerDescription(a, ServerType.RS_PRIMARY, lastUpdateTimeMillis = 100, lastWriteDate = 90, maxWireVersion = 21)
        val s = ServerDescription(b, ServerType.RS_SECONDARY, lastUpdateTimeMillis = 100, lastWriteDate = 40, maxWireVersion = 21)
        val s2 = ServerDescription(c, ServerType.RS_SECONDARY, lastUpdateTimeMillis = 100, lastWriteDate = 70, maxWireVersion = 21)
        val withPrimary = TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, listOf(p, s, s2).associateBy { it.address })
        ServerSelection.stalenessMillis(withPrimary, s, 10) shouldBe (60 - 10 + 10)
        ServerSelection.stalenessMillis(withPrimary, p, 10) shouldBe 0
        val noPrimary = TopologyDescription(TopologyType.REPLICA_SET_NO_PRIMARY, listOf(s, s2).associateBy { it.address })
        ServerSelection.stalenessMillis(noPrimary, s, 10) shouldBe (70 - 40 + 10)
    }

    test("unknown topologies select nothing; Single selects its server when available") {
        val unknown = TopologyDescription(TopologyType.UNKNOWN, mapOf(a to mongos(a, 1.0)))
        ServerSelection.suitableServers(unknown, read) shouldBe emptyList()
        val single = TopologyDescription(TopologyType.SINGLE, mapOf(a to ServerDescription.unknown(a)))
        ServerSelection.suitableServers(single, ServerSelectionOperation.Write) shouldBe emptyList()
    }
})
