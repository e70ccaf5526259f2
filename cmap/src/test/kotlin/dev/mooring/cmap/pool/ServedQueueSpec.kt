package dev.mooring.cmap.pool

import dev.mooring.cmap.internal.pool.ServedQueue
import dev.mooring.cmap.internal.pool.Waiter
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.thread
import kotlin.concurrent.withLock

/** The served waiters' intrusive FIFO (ServedQueue): its order, and nothing lost while one side adds and the other polls. */
class ServedQueueSpec : FunSpec({
    test("polls in the order of add; peek leaves the head in place") {
        val q = ServedQueue()
        q.isEmpty() shouldBe true
        q.poll() shouldBe null
        val ws = (1..3).map { Waiter(it.toLong()) }
        ws.forEach(q::add)
        q.isEmpty() shouldBe false
        q.peek() shouldBe ws[0]
        q.peek() shouldBe ws[0]
        q.poll() shouldBe ws[0]
        q.poll() shouldBe ws[1]
        val late = Waiter(4)
        q.add(late) // behind the last waiter, which is now the queue's only element
        q.poll() shouldBe ws[2]
        q.poll() shouldBe late
        q.poll() shouldBe null
        q.isEmpty() shouldBe true
        val after = Waiter(5)
        q.add(after) // after the queue ran empty: behind the sentinel
        q.peek() shouldBe after
        q.poll() shouldBe after
        q.isEmpty() shouldBe true
    }

    test("producers under one lock and one consumer at the same time: every waiter arrives once, in order") {
        // The queue's contract: adds under the pool's lock (here two producer threads taking turns
        // under one lock), polls by one drainer, both at once; the queue is often empty, so adds race
        // with the poll of the last element.
        val n = 200_000
        val q = ServedQueue()
        val lock = ReentrantLock()
        var next = 0L
        val failure = AtomicReference<Throwable>()
        val producers = (1..2).map {
            thread(name = "served-queue-producer-$it") {
                while (true) {
                    val done = lock.withLock {
                        if (next == n.toLong()) true else { q.add(Waiter(next++)); false }
                    }
                    if (done) break
                }
            }
        }
        val received = LongArray(n)
        var count = 0
        val deadline = System.nanoTime() + 60_000_000_000L
        val consumer = thread(name = "served-queue-consumer") {
            try {
                while (count < n) {
                    check(System.nanoTime() < deadline) { "only $count of $n waiters arrived" }
                    val w = q.poll() ?: continue
                    received[count++] = w.startNanos
                }
                check(q.poll() == null) { "a waiter arrived twice" }
            } catch (t: Throwable) {
                failure.set(t)
            }
        }
        producers.forEach { it.join(60_000) }
        consumer.join(60_000)
        consumer.isAlive shouldBe false
        failure.get() shouldBe null
        count shouldBe n
        (0 until n).firstOrNull { received[it] != it.toLong() } shouldBe null
        q.isEmpty() shouldBe true
    }
})
