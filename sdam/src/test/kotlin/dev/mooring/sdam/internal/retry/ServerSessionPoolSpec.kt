package dev.mooring.sdam.internal.retry

import dev.mooring.sdam.internal.session.ServerSessionPool
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import io.kotest.matchers.types.shouldNotBeSameInstanceAs

/** The implicit session pool: LIFO reuse, dirty sessions discarded, sessions about to expire never handed out. */
class ServerSessionPoolSpec : FunSpec({
    test("released sessions are reused last-in first-out; transaction numbers keep counting") {
        val pool = ServerSessionPool()
        val a = pool.acquire(30)
        val b = pool.acquire(30)
        a.lsid shouldNotBe b.lsid
        a.lsid.getBinary("id").type shouldBe 4.toByte()
        a.nextTxnNumber() shouldBe 1L
        pool.release(a, 30)
        pool.release(b, 30)
        pool.size shouldBe 2
        pool.acquire(30) shouldBeSameInstanceAs b
        val again = pool.acquire(30)
        again shouldBeSameInstanceAs a
        again.nextTxnNumber() shouldBe 2L
    }

    test("a session that saw a network error is discarded on release") {
        val pool = ServerSessionPool()
        val s = pool.acquire(30)
        s.markDirty()
        pool.release(s, 30)
        pool.size shouldBe 0
        pool.acquire(30) shouldNotBeSameInstanceAs s
    }

    test("a session with at least a minute left before logicalSessionTimeoutMinutes is reused; with less, it is not") {
        var now = 0L
        val pool = ServerSessionPool { now }
        val s = pool.acquire(10) // created (last used) at 0
        pool.release(s, 10)
        now += 8 * 60_000_000_000L // 8 idle minutes: 2 left
        pool.acquire(10) shouldBeSameInstanceAs s
        pool.release(s, 10)
        now += 60_000_000_000L // 9 idle minutes: exactly 1 left, still usable
        pool.acquire(10) shouldBeSameInstanceAs s
        pool.release(s, 10)
        now += 1 // less than a minute left
        pool.acquire(10) shouldNotBeSameInstanceAs s
        pool.size shouldBe 0
    }

    test("releasing a session does not count as using it: one idle too long since its last use is discarded on release") {
        var now = 0L
        val pool = ServerSessionPool { now }
        val s = pool.acquire(10)
        now += 9 * 60_000_000_000L + 1 // held, unused, until less than a minute is left
        pool.release(s, 10)
        pool.size shouldBe 0
        val t = pool.acquire(null) // load-balanced mode: no expiry
        now += 60 * 60_000_000_000L
        pool.release(t, null)
        pool.acquire(null) shouldBeSameInstanceAs t
    }
})
