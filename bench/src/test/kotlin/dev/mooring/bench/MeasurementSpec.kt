package dev.mooring.bench

import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.DrainOrder
import dev.mooring.bench.measure.Fairness
import dev.mooring.bench.measure.LatencyHistogram
import dev.mooring.bench.measure.PlatformCallers
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.worker.CellCommand
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.maps.shouldNotContainKey
import java.lang.management.ManagementFactory
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe

class MeasurementSpec : FunSpec({
    test("platform callers run until the window stops, each with its own index; a failure or a thread that never stops fails the cell") {
        val window = CallerWindow(3)
        val seen = java.util.concurrent.ConcurrentHashMap.newKeySet<String>()
        PlatformCallers.run(window, 3, "probe", warmupMs = 10, measureMs = 20) { i ->
            seen += "${Thread.currentThread().name}=$i"
            while (!window.stop) Thread.sleep(1)
        }
        seen shouldBe setOf("probe-0=0", "probe-1=1", "probe-2=2")
        window.stop shouldBe true
        val failed = shouldThrow<IllegalStateException> {
            PlatformCallers.run(CallerWindow(2), 2, "probe", warmupMs = 1, measureMs = 1) { i -> if (i == 1) error("boom") }
        }
        failed.message shouldBe "a probe thread failed: java.lang.IllegalStateException: boom"
        val release = java.util.concurrent.CountDownLatch(1)
        try {
            shouldThrow<IllegalStateException> {
                PlatformCallers.run(CallerWindow(1), 1, "stuck", warmupMs = 1, measureMs = 1, joinGraceMs = 50) { release.await() }
            }.message shouldBe "a stuck thread was still running 50 ms after the window (the server stopped answering)"
        } finally {
            release.countDown()
        }
    }

    test("Jain's index is 1 for equal shares and 1/n when one caller does everything") {
        Fairness.jain(longArrayOf(5, 5, 5, 5)) shouldBe 1.0
        Fairness.jain(longArrayOf(100, 0, 0, 0)) shouldBe 0.25
        // (1+2+3)^2 / (3 * (1+4+9)) = 36/42
        Fairness.jain(longArrayOf(1, 2, 3)) shouldBe (36.0 / 42.0 plusOrMinus 1e-12)
    }

    test("Jain's index rejects empty input, no completions and negative counts") {
        shouldThrow<IllegalArgumentException> { Fairness.jain(longArrayOf()) }
        shouldThrow<IllegalArgumentException> { Fairness.jain(longArrayOf(0, 0)) }
        shouldThrow<IllegalArgumentException> { Fairness.jain(longArrayOf(3, -1)) }
    }

    test("histogram quantiles are within the bucket precision of the exact order statistics") {
        val h = LatencyHistogram()
        val values = (1..100_000).map { it * 37L } // 37 ns .. 3.7 ms
        values.shuffled(kotlin.random.Random(42)).forEach { h.record(it) }
        for (q in listOf(0.5, 0.99, 0.999, 1.0)) {
            val exact = values[(kotlin.math.ceil(q * values.size).toInt() - 1)]
            val got = h.quantile(q)
            got shouldBeGreaterThanOrEqual exact
            got shouldBeLessThanOrEqual (exact + exact / 30 + 1) // 64 sub-buckets: < 3.2% above
        }
        h.count shouldBe 100_000L
        h.max shouldBe 3_700_000L
    }

    test("merged histograms equal one histogram of all values; reset empties") {
        val a = LatencyHistogram()
        val b = LatencyHistogram()
        val all = LatencyHistogram()
        for (v in 1L..5_000L) {
            (if (v % 2 == 0L) a else b).record(v * 1_000)
            all.record(v * 1_000)
        }
        a.merge(b)
        for (q in listOf(0.1, 0.5, 0.9, 0.99)) a.quantile(q) shouldBe all.quantile(q)
        a.reset()
        a.count shouldBe 0L
        a.quantile(0.5) shouldBe 0L
    }

    test("bucket index and upper bound agree for every magnitude") {
        var v = 1L
        while (v in 1..(Long.MAX_VALUE / 3)) {
            val i = LatencyHistogram.index(v)
            LatencyHistogram.upperBound(i) shouldBeGreaterThanOrEqual v
            if (i > 0) LatencyHistogram.upperBound(i - 1) shouldBeLessThanOrEqual v
            v = v * 3 + 1
        }
    }

    test("drain order reports the largest displacement and refuses unserved waiters") {
        val d = DrainOrder(4)
        listOf(0, 2, 1, 3).forEach { d.served(it) }
        d.maxDisplacement() shouldBe 1
        val partial = DrainOrder(2)
        partial.served(0)
        shouldThrow<IllegalStateException> { partial.maxDisplacement() }
    }

    test("a window given a server's pid reports that process's CPU per operation over the same window") {
        // The "server" is this JVM, so the two readings of one CPU must agree: the process CPU
        // (nanosecond clock) and the same process read as another one (/proc, 10 ms ticks).
        val w = CallerWindow(1, ProcessHandle.current().pid())
        val thread = ManagementFactory.getThreadMXBean()
        w.open()
        val until = thread.currentThreadCpuTime + 400_000_000L // 400 ms of this thread's CPU, however long that takes
        var spins = 0L
        while (thread.currentThreadCpuTime < until) spins++
        repeat(1_000) { w.record(0, 1_000) }
        w.close()
        val m = w.summarize()
        val own = m.getValue("cpuUsPerOp")
        val server = m.getValue("serverCpuUsPerOp")
        spins shouldBeGreaterThanOrEqual 1L
        own shouldBeGreaterThan 350.0 // 1,000 operations shared at least 350 ms
        server shouldBe (own plusOrMinus own * 0.15) // 15%: two clocks, one of them in ticks
    }

    test("without a server's pid the window reports no server CPU, and a pid of no process is refused") {
        val w = CallerWindow(1)
        w.open()
        w.record(0, 1_000)
        w.close()
        w.summarize() shouldNotContainKey "serverCpuUsPerOp"
        shouldThrow<IllegalArgumentException> { CallerWindow(1, Long.MAX_VALUE) }
    }

    test("a cell command carries the server's pid through its JSON line, and an older line without it parses") {
        val cmd = CellCommand(Scenario.PING_RESPONDER, 64, 10, "mongodb://h:1/", 100, 200, serverPid = 4242)
        CellCommand.fromJson(cmd.toJson()) shouldBe cmd
        val without = cmd.copy(serverPid = null)
        without.toJson().containsKey("serverPid") shouldBe false
        CellCommand.fromJson(without.toJson()) shouldBe without
    }
    test("a window's allocation counts thread by thread: a thread that dies inside it does not make it negative, one started in it counts") {
        val meter = dev.mooring.bench.measure.ResourceMeter()
        val sink = java.util.concurrent.atomic.AtomicReference<Any>()
        val allocatedBefore = java.util.concurrent.CountDownLatch(1)
        val dieNow = java.util.concurrent.CountDownLatch(1)
        val retiring = Thread {
            repeat(64) { sink.set(ByteArray(1 shl 20)) } // 64 MB allocated before the window
            allocatedBefore.countDown()
            dieNow.await()
        }.apply { start() }
        allocatedBefore.await()
        val start = meter.snapshot()
        dieNow.countDown()
        retiring.join() // dies inside the window
        val freshAllocated = java.util.concurrent.CountDownLatch(1)
        val freshExit = java.util.concurrent.CountDownLatch(1)
        val fresh = Thread {
            repeat(4) { sink.set(ByteArray(1 shl 20)) } // 4 MB allocated by a thread started inside the window
            freshAllocated.countDown()
            freshExit.await()
        }.apply { start() }
        freshAllocated.await()
        val end = meter.snapshot() // the new thread still alive
        freshExit.countDown()
        fresh.join()
        val allocated = end.allocatedSince(start)
        // the dead thread's 64 MB is not subtracted (the old sum of live threads' totals gave about -60 MB here);
        // the new thread's 4 MB is counted
        allocated shouldBeGreaterThanOrEqual (4L shl 20)
        end.allocatedByThread.containsKey(retiring.id) shouldBe false
    }
})
