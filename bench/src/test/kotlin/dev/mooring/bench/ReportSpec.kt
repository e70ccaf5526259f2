package dev.mooring.bench

import dev.mooring.bench.report.Aggregation
import dev.mooring.bench.report.BenchRow
import dev.mooring.bench.report.Library
import dev.mooring.bench.report.RatioTable
import dev.mooring.bench.report.ReportWriter
import dev.mooring.bench.report.Scenario
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import java.nio.file.Files

class ReportSpec : FunSpec({
    fun row(lib: Library, ops: Double, p999: Double, notes: String? = null) =
        BenchRow(lib, Scenario.PING_RESPONDER, 512, 10, mapOf("opsPerSec" to ops, "p999Us" to p999, "jain" to 0.9), notes)

    test("the report is a JSON array of objects with the documented keys, and round-trips") {
        val rows = listOf(row(Library.MOORING, 50_000.0, 800.0), row(Library.JAVA_SYNC, 40_000.0, 5_000.0, "noisy"))
        val text = ReportWriter.encode(rows)
        val arr = Json.parseToJsonElement(text).jsonArray
        arr.size shouldBe 2
        arr[0].jsonObject.keys.toList() shouldBe listOf("library", "scenario", "callers", "maxPoolSize", "opsPerSec", "p999Us", "jain")
        arr[0].jsonObject["library"].toString() shouldBe "\"mooring\""
        arr[1].jsonObject["notes"].toString() shouldBe "\"noisy\""
        ReportWriter.decode(text) shouldBe rows
    }

    test("write creates the directory and replaces an older report") {
        val dir = Files.createTempDirectory("bench-report")
        val file = dir.resolve("target/bench-report.json")
        ReportWriter.write(file, listOf(row(Library.MOORING, 1.0, 2.0)))
        ReportWriter.write(file, listOf(row(Library.JAVA_REACTIVE, 3.0, 4.0)))
        ReportWriter.decode(Files.readString(file)).single().library shouldBe Library.JAVA_REACTIVE
    }

    test("unknown libraries, scenarios and non-finite metrics are rejected") {
        shouldThrow<IllegalArgumentException> { ReportWriter.decode("""[{"library":"go","scenario":"pool-only"}]""") }
        shouldThrow<IllegalArgumentException> { ReportWriter.decode("""[{"library":"mooring","scenario":"nope"}]""") }
        shouldThrow<IllegalArgumentException> { ReportWriter.decode("""{"library":"mooring"}""") }
        shouldThrow<IllegalArgumentException> { row(Library.MOORING, Double.NaN, 1.0).toJson() }
    }

    test("repetitions fold into per-metric medians") {
        val reps = listOf(3.0, 1.0, 2.0).map { row(Library.MOORING, it * 1000, it) } + row(Library.JAVA_SYNC, 7.0, 7.0)
        val m = Aggregation.medians(reps)
        m.size shouldBe 2
        m[0].metrics["opsPerSec"] shouldBe 2000.0
        m[0].metrics["p999Us"] shouldBe 2.0
        m[0].metrics["repetitions"] shouldBe 3.0
        m[1].metrics["opsPerSec"] shouldBe 7.0
        Aggregation.median(listOf(4.0, 1.0, 3.0, 2.0)) shouldBe 2.5
    }

    test("a bound every drain must keep is reported as the worst drain, not the median") {
        val drains = listOf(0.0, 0.0, 5_000.0, 0.0, 0.0).map {
            BenchRow(Library.MOORING, Scenario.WAITERS_100K, 100_000, 10, mapOf("drainMs" to 30.0 + it / 1000, "fifoMaxDisplacement" to it))
        }
        val m = Aggregation.medians(drains).single().metrics
        m["fifoMaxDisplacement"] shouldBe 5_000.0
        m["drainMs"] shouldBe 30.0
        m["repetitions"] shouldBe 5.0
    }

    test("ratios divide Mooring by the better official value in each metric's direction") {
        val cell = listOf(
            row(Library.MOORING, 60_000.0, 1_000.0),
            row(Library.JAVA_SYNC, 40_000.0, 9_000.0),
            row(Library.JAVA_REACTIVE, 30_000.0, 4_000.0),
        )
        val r = RatioTable.ratios(cell)
        r.getValue("opsPerSec") shouldBe (1.5 plusOrMinus 1e-9) // vs the higher throughput (sync)
        r.getValue("p999Us") shouldBe (0.25 plusOrMinus 1e-9) // vs the lower latency (reactive)
        val table = RatioTable.render(cell)
        table shouldContain "### ping-responder"
        table shouldContain "**1.50×**"
        table shouldContain "**0.25×**"
    }

    test("the floor is not an official library: it gets its own mooring ÷ floor line for ops/s and CPU per op") {
        fun ping(lib: Library, ops: Double, cpu: Double) =
            BenchRow(lib, Scenario.PING_RESPONDER, 64, 10, mapOf("opsPerSec" to ops, "cpuUsPerOp" to cpu, "p999Us" to 100.0))
        val cell = listOf(ping(Library.MOORING, 40_000.0, 30.0), ping(Library.JAVA_SYNC, 20_000.0, 40.0), ping(Library.FLOOR, 50_000.0, 20.0))
        RatioTable.ratios(cell).getValue("opsPerSec") shouldBe (2.0 plusOrMinus 1e-9) // floor not taken as the best official
        val f = RatioTable.floorRatios(cell)
        f.keys shouldBe setOf("opsPerSec", "cpuUsPerOp")
        f.getValue("opsPerSec") shouldBe (0.8 plusOrMinus 1e-9)
        f.getValue("cpuUsPerOp") shouldBe (1.5 plusOrMinus 1e-9)
        // the server's CPU per operation is compared too when both rows carry it
        val withServer = cell.map { it.copy(metrics = it.metrics + ("serverCpuUsPerOp" to if (it.library == Library.FLOOR) 8.0 else 10.0)) }
        RatioTable.floorRatios(withServer).getValue("serverCpuUsPerOp") shouldBe (1.25 plusOrMinus 1e-9)
        RatioTable.render(withServer) shouldContain "| cpuUsPerOp | serverCpuUsPerOp |"
        val table = RatioTable.render(cell)
        table shouldContain "| 64 | 10 | floor |"
        table shouldContain "**mooring ÷ floor**"
        RatioTable.floorRatios(cell.filter { it.library != Library.FLOOR }) shouldBe emptyMap()
        Library.FLOOR.measures(Scenario.POOL_ONLY) shouldBe false
        Library.FLOOR.measures(Scenario.PING_MONGO_JAVA_SERVER) shouldBe true
    }

    test("the Mooring variants measure the ping scenarios only and never stand in for mooring in a ratio line") {
        fun ping(lib: Library, ops: Double, cpu: Double) =
            BenchRow(lib, Scenario.PING_RESPONDER, 64, 10, mapOf("opsPerSec" to ops, "cpuUsPerOp" to cpu))
        val cell = listOf(
            ping(Library.MOORING_ONE_LOOP, 90_000.0, 10.0), ping(Library.MOORING, 40_000.0, 30.0),
            ping(Library.JAVA_SYNC, 20_000.0, 40.0), ping(Library.FLOOR, 50_000.0, 20.0),
        )
        RatioTable.ratios(cell).getValue("opsPerSec") shouldBe (2.0 plusOrMinus 1e-9)
        RatioTable.floorRatios(cell).getValue("opsPerSec") shouldBe (0.8 plusOrMinus 1e-9)
        RatioTable.ratios(cell.filter { it.library != Library.MOORING }) shouldBe emptyMap()
        RatioTable.render(cell) shouldContain "| 64 | 10 | mooring-1loop |"
        for (lib in listOf(Library.MOORING_ONE_LOOP, Library.MOORING_DEFAULT, Library.MOORING_JAVA, Library.FLOOR)) {
            lib.measures(Scenario.PING_RESPONDER) shouldBe true
            lib.measures(Scenario.POOL_ONLY) shouldBe false
            lib.measures(Scenario.WAITERS_100K) shouldBe false
        }
        for (lib in listOf(Library.MOORING, Library.JAVA_SYNC, Library.JAVA_REACTIVE)) lib.measures(Scenario.POOL_ONLY) shouldBe true
    }

    test("the paths most callers take (Dispatchers.Default, the Java facade) get ratio lines of their own against the floor and the best official library") {
        fun ping(lib: Library, ops: Double, cpu: Double) =
            BenchRow(lib, Scenario.PING_RESPONDER, 64, 10, mapOf("opsPerSec" to ops, "cpuUsPerOp" to cpu))
        val cell = listOf(
            ping(Library.MOORING, 60_000.0, 15.0), ping(Library.MOORING_DEFAULT, 30_000.0, 30.0), ping(Library.MOORING_JAVA, 45_000.0, 20.0),
            ping(Library.JAVA_SYNC, 40_000.0, 25.0), ping(Library.FLOOR, 60_000.0, 15.0),
        )
        RatioTable.floorRatios(cell, Library.MOORING_DEFAULT).getValue("opsPerSec") shouldBe (0.5 plusOrMinus 1e-9)
        RatioTable.floorRatios(cell, Library.MOORING_JAVA).getValue("cpuUsPerOp") shouldBe (20.0 / 15.0 plusOrMinus 1e-9)
        RatioTable.ratios(cell, Library.MOORING_JAVA).getValue("opsPerSec") shouldBe (45.0 / 40.0 plusOrMinus 1e-9)
        val table = RatioTable.render(cell)
        table shouldContain "| 64 | 10 | **mooring-default ÷ floor** | **0.50×** |"
        table shouldContain "| 64 | 10 | **mooring-java ÷ best official** | **1.13×** |"
        RatioTable.render(cell.filter { it.library != Library.MOORING_JAVA }) shouldNotContain "mooring-java ÷"
    }

    test("connectionsCreated is shown but not turned into a ratio") {
        val cell = listOf(
            BenchRow(Library.MOORING, Scenario.POOL_ONLY, 64, 10, mapOf("opsPerSec" to 2.0, "connectionsCreated" to 10.0)),
            BenchRow(Library.JAVA_REACTIVE, Scenario.POOL_ONLY, 64, 10, mapOf("opsPerSec" to 1.0, "connectionsCreated" to 1.0)),
        )
        RatioTable.ratios(cell).keys shouldBe setOf("opsPerSec")
    }

    test("no ratio without a Mooring row or without an official row") {
        RatioTable.ratios(listOf(row(Library.JAVA_SYNC, 1.0, 1.0))) shouldBe emptyMap()
        RatioTable.ratios(listOf(row(Library.MOORING, 1.0, 1.0))) shouldBe emptyMap()
    }
})
