package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.channels.Channel

/**
 * The pool's FIFO of [Waiter]s: a [Channel] (unlimited buffer) the hand-over receives from with
 * [Channel.tryReceive], skipping waiters that left the queue meanwhile. Not thread-safe: guarded
 * by the pool's lock (every send and receive happens under it, so the channel's order is the
 * order of [addLast]).
 *
 * A waiter that leaves early (timed out or cancelled, [remove]) is only marked ([Waiter.queued]
 * false) and stays in the channel until [pollFirst] skips it; when such dead entries outnumber
 * the live ones (and there are more than a few), the channel is compacted by re-sending the live
 * waiters in order, so a queue whose waiters keep timing out while no connection comes back does
 * not grow without bound (amortized O(1) per removal).
 */
internal class WaitQueue {
    private val channel = Channel<Waiter>(Channel.UNLIMITED)

    /** Number of queued (live) waiters. */
    var size: Int = 0
        private set

    /** Waiters that left the queue but are still in the channel. */
    private var dead = 0

    fun isEmpty(): Boolean = size == 0

    fun addLast(w: Waiter) {
        check(!w.queued) { "waiter already queued" }
        w.queued = true
        channel.trySend(w).getOrThrow() // an unlimited channel never refuses
        size++
    }

    /** Removes and returns the oldest live waiter, or null. */
    fun pollFirst(): Waiter? {
        if (size == 0) return null
        while (true) {
            val w = channel.tryReceive().getOrNull() ?: error("wait queue: $size waiters counted, none in the channel")
            if (w.queued) {
                w.queued = false
                size--
                return w
            }
            dead--
        }
    }

    /** Removes [w] if queued (it is skipped when its turn comes); returns whether it was. */
    fun remove(w: Waiter): Boolean {
        if (!w.queued) return false
        w.queued = false
        size--
        dead++
        if (dead > COMPACT_MIN_DEAD && dead > size) compact()
        return true
    }

    /** Removes every waiter, oldest first, and hands each to [action]. */
    inline fun drain(action: (Waiter) -> Unit) {
        while (true) {
            val w = pollFirst() ?: return
            action(w)
        }
    }

    /** Removes the waiters [predicate] selects, oldest first, and hands each to [action]; the others keep their order. */
    inline fun removeWhere(predicate: (Waiter) -> Boolean, action: (Waiter) -> Unit) {
        val kept = ArrayList<Waiter>()
        drain { w -> if (predicate(w)) action(w) else kept.add(w) }
        for (w in kept) addLast(w)
    }

    /** Drops the dead entries: receives everything and re-sends the live waiters, in order. */
    private fun compact() {
        repeat(size + dead) {
            val w = channel.tryReceive().getOrThrow()
            if (w.queued) channel.trySend(w).getOrThrow()
        }
        dead = 0
    }

    private companion object {
        /** Dead entries tolerated before a compaction is considered. */
        const val COMPACT_MIN_DEAD = 64
    }
}
