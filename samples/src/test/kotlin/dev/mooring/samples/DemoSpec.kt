package dev.mooring.samples

import dev.mooring.samples.demo.DemoArgs
import dev.mooring.samples.demo.DemoArgsException
import dev.mooring.samples.demo.EventJson
import dev.mooring.samples.demo.runDemo
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import kotlin.time.Duration.Companion.milliseconds

class DemoSpec : FunSpec({

    fun capture(): Pair<ByteArrayOutputStream, PrintStream> = ByteArrayOutputStream().let { it to PrintStream(it, true, Charsets.UTF_8) }

    test("--seconds 2 without a terminal: status lines with ops/s above zero, a summary, exit code 0") {
        val (outBytes, out) = capture()
        val (errBytes, err) = capture()
        val code = runDemo(arrayOf("--seconds", "2", "--callers", "4"), out, err, interactive = false)
        val text = outBytes.toString(Charsets.UTF_8)
        withClue(text + errBytes.toString(Charsets.UTF_8)) {
            code shouldBe 0
            val rates = Regex("""ops/s=(\d+)""").findAll(text).map { it.groupValues[1].toInt() }.toList()
            rates.shouldNotBeEmpty()
            rates.max() shouldBeGreaterThan 0
            text shouldContain "topology=Single"
            text shouldContain "Standalone"
            text shouldContain "Summary"
            Regex("""operations (\d+)""").find(text)!!.groupValues[1].toInt() shouldBeGreaterThan 0
            text shouldContain "errors 0"
        }
    }

    test("--json: every line on stdout is a JSON event; status and summary go to stderr") {
        val (outBytes, out) = capture()
        val (errBytes, err) = capture()
        runDemo(arrayOf("--seconds", "1", "--callers", "2", "--json"), out, err, interactive = false) shouldBe 0
        val lines = outBytes.toString(Charsets.UTF_8).lines().filter { it.isNotBlank() }
        val names = lines.map { Json.parseToJsonElement(it).jsonObject["event"]!!.jsonPrimitive.content }
        names.first() shouldBe "TopologyOpening"
        names shouldContainAll listOf("ServerOpening", "PoolCreated", "ConnectionCheckedOut", "ConnectionCheckedIn", "TopologyClosed")
        names.last() shouldBe "TopologyClosed"
        errBytes.toString(Charsets.UTF_8) shouldContain "Summary"
    }

    test("an event's JSON carries its fields, durations in milliseconds and reasons by spec name") {
        val json = EventJson.of(ConnectionCheckOutFailedEvent(ServerAddress("db1", 27017), ConnectionCheckOutFailedReason.TIMEOUT, 1500.milliseconds, timestampMillis = 0))
        json["event"]!!.jsonPrimitive.content shouldBe "ConnectionCheckOutFailed"
        json["address"]!!.jsonPrimitive.content shouldBe "db1:27017"
        json["reason"]!!.jsonPrimitive.content shouldBe "timeout"
        json["durationMS"]!!.jsonPrimitive.content shouldBe "1500.0"
        json["ts"]!!.jsonPrimitive.content shouldBe "1970-01-01T00:00:00Z"
    }

    test("bad command lines get a clear error and exit code 2") {
        shouldThrow<DemoArgsException> { DemoArgs.parse(arrayOf("--seconds", "zero")) }.message shouldContain "--seconds"
        shouldThrow<DemoArgsException> { DemoArgs.parse(arrayOf("--stepdown-every", "3")) }.message shouldContain "--replica-set"
        shouldThrow<DemoArgsException> { DemoArgs.parse(arrayOf("http://x")) }.message shouldContain "connection string"
        shouldThrow<DemoArgsException> { DemoArgs.parse(arrayOf("mongodb://a", "--dns", "127.0.0.1:53")) }
        DemoArgs.parse(arrayOf("mongodb+srv://c.example.com", "--dns", "127.0.0.1:5353")).dns shouldBe "127.0.0.1:5353"
        val (_, out) = capture()
        val (errBytes, err) = capture()
        runDemo(arrayOf("--bogus"), out, err, interactive = false) shouldBe 2
        errBytes.toString(Charsets.UTF_8) shouldContain "unknown option '--bogus'"
    }

    test("--watch needs a replica set: alone (the embedded server) it is a clear error; with --replica-set or a URI it is taken") {
        shouldThrow<DemoArgsException> { DemoArgs.parse(arrayOf("--watch")) }.message shouldContain "change streams need a replica set"
        DemoArgs.parse(arrayOf("--replica-set", "--watch")).watch shouldBe true
        DemoArgs.parse(arrayOf("mongodb://a,b/?replicaSet=rs", "--watch")).watch shouldBe true
        DemoArgs.parse(arrayOf("--replica-set")).watch shouldBe false
        val (_, out) = capture()
        val (errBytes, err) = capture()
        runDemo(arrayOf("--watch"), out, err, interactive = false) shouldBe 2
        errBytes.toString(Charsets.UTF_8) shouldContain "--replica-set"
    }

    test("--replica-set --watch --json: the workload's inserts come out of the change stream as Change lines, counted in the summary") {
        val (outBytes, out) = capture()
        val (errBytes, err) = capture()
        val code = runDemo(arrayOf("--replica-set", "--watch", "--json", "--seconds", "3", "--callers", "2"), out, err, interactive = false)
        val summary = errBytes.toString(Charsets.UTF_8)
        withClue(summary) {
            code shouldBe 0
            val changes = outBytes.toString(Charsets.UTF_8).lines().filter { it.isNotBlank() }
                .map { Json.parseToJsonElement(it).jsonObject }
                .filter { it["event"]!!.jsonPrimitive.content == "Change" }
            changes.shouldNotBeEmpty()
            changes.first()["operationType"]!!.jsonPrimitive.content shouldBe "insert"
            changes.first()["ns"]!!.jsonPrimitive.content shouldBe "mooring_demo.items"
            changes.first()["documentKey"]!!.jsonObject["_id"]!!.jsonPrimitive.content shouldContain "c"
            Regex("""change stream events (\d+)""").find(summary)!!.groupValues[1].toInt() shouldBe changes.size
        }
    }

    test("--replica-set --stepdown-every: the workload survives a failover") {
        val (outBytes, out) = capture()
        val (errBytes, err) = capture()
        val code = runDemo(arrayOf("--replica-set", "--stepdown-every", "2", "--seconds", "5", "--callers", "4"), out, err, interactive = false)
        val text = outBytes.toString(Charsets.UTF_8)
        withClue(text + errBytes.toString(Charsets.UTF_8)) {
            code shouldBe 0
            text shouldContain "ReplicaSetWithPrimary"
            text shouldContain "step-down #1: stepped down"
            text shouldContain "step-downs"
            Regex("""operations (\d+)""").find(text)!!.groupValues[1].toInt() shouldBeGreaterThan 0
        }
    }
})

private fun <T> withClue(clue: String, block: () -> T): T = io.kotest.assertions.withClue(clue, block)

private infix fun List<String>.shouldContainAll(expected: List<String>) {
    val missing = expected.filter { it !in this }
    missing shouldBe emptyList()
}
