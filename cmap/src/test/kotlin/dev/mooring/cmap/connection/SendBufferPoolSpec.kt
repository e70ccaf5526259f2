package dev.mooring.cmap.connection

import dev.mooring.cmap.internal.connection.SendBufferPool
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import io.kotest.matchers.types.shouldNotBeSameInstanceAs
import org.bson.io.BasicOutputBuffer

/** The large messages' buffers a client's connections share. */
class SendBufferPoolSpec : FunSpec({
    test("a buffer given back is taken again, emptied, by a message it holds; a larger message gets a new one") {
        val pool = SendBufferPool(maxRetainedBytes = 10_000_000)
        val first = pool.take(1_000_000)
        first.internalBuffer.size shouldBeGreaterThanOrEqual 1_000_000
        first.writeBytes(ByteArray(500_000))
        pool.give(first)
        pool.retainedCapacity shouldBe first.internalBuffer.size.toLong()

        val again = pool.take(800_000)
        again shouldBeSameInstanceAs first
        again.position shouldBe 0
        pool.retainedCapacity shouldBe 0L
        pool.give(again)

        val larger = pool.take(2_000_000)
        larger shouldNotBeSameInstanceAs first
        larger.internalBuffer.size shouldBeGreaterThanOrEqual 2_000_000
        // the smaller one is still there for the next small message
        pool.take(100_000) shouldBeSameInstanceAs first
    }

    test("take chooses the smallest buffer that holds the message") {
        val pool = SendBufferPool(maxRetainedBytes = 10_000_000)
        val big = BasicOutputBuffer(4_000_000)
        val mid = BasicOutputBuffer(2_000_000)
        val small = BasicOutputBuffer(1_000_000)
        pool.give(big)
        pool.give(small)
        pool.give(mid)
        pool.take(1_500_000) shouldBeSameInstanceAs mid
        pool.take(900_000) shouldBeSameInstanceAs small
        pool.take(900_000) shouldBeSameInstanceAs big
        pool.retainedCapacity shouldBe 0L
    }

    test("it retains at most maxRetainedBytes: the smallest go first, a buffer larger than the bound is never kept") {
        val pool = SendBufferPool(maxRetainedBytes = 6_000_000)
        val a = BasicOutputBuffer(2_000_000)
        val b = BasicOutputBuffer(2_500_000)
        pool.give(a)
        pool.give(b)
        pool.retainedCapacity shouldBe 4_500_000L
        val c = BasicOutputBuffer(3_000_000)
        pool.give(c) // a goes: b and c fit
        pool.retainedCapacity shouldBe 5_500_000L
        pool.take(1) shouldBeSameInstanceAs b
        pool.take(1) shouldBeSameInstanceAs c
        pool.give(BasicOutputBuffer(6_500_000)) // larger than the bound: not kept
        pool.retainedCapacity shouldBe 0L

        // a buffer smaller than every retained one does not push a larger one out
        val d = BasicOutputBuffer(2_600_000)
        val e = BasicOutputBuffer(2_400_000)
        pool.give(d)
        pool.give(e)
        pool.give(BasicOutputBuffer(2_000_000))
        pool.retainedCapacity shouldBe 5_000_000L
        pool.take(2_500_000) shouldBeSameInstanceAs d
        pool.take(1) shouldBeSameInstanceAs e
    }

    test("at most MAX_RETAINED buffers are kept however small") {
        val pool = SendBufferPool(maxRetainedBytes = Long.MAX_VALUE)
        repeat(SendBufferPool.MAX_RETAINED + 5) { pool.give(BasicOutputBuffer(100_000 + it)) }
        pool.retainedCapacity shouldBeLessThanOrEqual (SendBufferPool.MAX_RETAINED.toLong() * 100_100)
        var kept = 0
        while (pool.retainedCapacity > 0) {
            pool.take(1)
            kept++
        }
        kept shouldBe SendBufferPool.MAX_RETAINED
    }
})
