package dev.mooring.bench

import dev.mooring.bench.scenario.Elections
import dev.mooring.bench.scenario.FailoverRun
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class FailoverRunSpec : FunSpec({
    /** A scripted replica set: members a, b, c; each election picks the next one, elected at 1000·n µs. */
    class Script(val log: MutableList<String>) : Elections {
        private val members = listOf("a", "b", "c")
        private var n = 0
        override fun primary() = members[n % 3]
        override fun elect(): Pair<String, Long> {
            n++
            log += "elect ${members[n % 3]}"
            return members[n % 3] to 1_000L * n
        }
    }

    test("the client settles after first seeing the primary and after every detection, so no election is measured during discovery") {
        val log = ArrayList<String>()
        val script = Script(log)
        var seen = 0
        FailoverRun.measure(script, 3, settle = { log += "settle" }) { host ->
            log += "await $host"
            1_000L * seen++ // the initial primary at 0, then each new primary at its election time
        }
        log shouldBe listOf(
            "await a", "settle",
            "elect b", "await b", "settle",
            "elect c", "await c", "settle",
            "elect a", "await a", "settle",
        )
    }

    test("detection times are the seen-at minus elected-at differences, in ms: median and max") {
        val delaysUs = listOf(4_000L, 70_000L, 6_000L)
        var k = -1
        val r = FailoverRun.measure(Script(ArrayList()), 3, settle = {}) { _ ->
            if (k < 0) { k = 0; 0L } else 1_000L * (k + 1) + delaysUs[k++]
        }
        r["detectMsP50"] shouldBe 6.0
        r["detectMsMax"] shouldBe 70.0
        r["elections"] shouldBe 3.0
    }

    test("at least one election is required") {
        shouldThrow<IllegalArgumentException> { FailoverRun.measure(Script(ArrayList()), 0, settle = {}) { 0L } }
    }
})
