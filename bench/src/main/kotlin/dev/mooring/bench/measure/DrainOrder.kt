package dev.mooring.bench.measure

import java.util.concurrent.atomic.AtomicInteger

/**
 * The order in which N queued waiters were served. Waiter i (enqueued i-th) calls [served]; the
 * rank it gets is compared with i. A strictly FIFO pool served by several threads still shows a
 * small displacement (two waiters resumed on different threads can finish in either order), so
 * the report gives the largest displacement rather than a yes/no.
 */
class DrainOrder(n: Int) {
    private val rank = IntArray(n) { -1 }
    private val next = AtomicInteger()

    fun served(waiter: Int) {
        rank[waiter] = next.getAndIncrement()
    }

    val servedCount: Int get() = next.get()

    /** max |rank - enqueue index| over all waiters; call after every waiter was served. */
    fun maxDisplacement(): Int {
        var max = 0
        for (i in rank.indices) {
            check(rank[i] >= 0) { "waiter $i was never served" }
            max = maxOf(max, kotlin.math.abs(rank[i] - i))
        }
        return max
    }
}
