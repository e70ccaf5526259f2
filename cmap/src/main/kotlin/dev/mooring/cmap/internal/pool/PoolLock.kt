package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.withContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.cancellation.CancellationException

/**
 * The pool's lock: one fair coroutine [Mutex] that is never held across I/O or suspension. A
 * contended caller spins briefly ([tryLockSpinning]) before it queues in the Mutex (FIFO;
 * spinning never overtakes a queued caller), and a queued caller's critical section runs on the
 * thread that releases the Mutex ([lockedSlow]), so the lock is never held by a coroutine that
 * is only waiting to be scheduled.
 */
internal class PoolLock {
    private val mutex = Mutex()

    /** The waiters served under this lock, resumed in order once it is released ([withLock], [runServed]). */
    val served = ServedWaiters()

    /**
     * Test-only: a contended lock attempt queues at once (no spinning) and resumes on its own
     * dispatcher (no inline hand-off in [lockedSlow]), and served waiters are resumed through their
     * dispatcher under the lock (no [ServedWaiters] run). The Lincheck model check sets it, because
     * its thread model cannot follow a critical section or a waiter run on another coroutine's
     * thread; the logic under the lock is the same either way. Never set in production.
     */
    @Volatile var modelChecking: Boolean = false
        set(value) {
            field = value
            served.inline = !value
        }

    /**
     * Runs [block] holding the mutex: [tryLockSpinning] first, else [lockedSlow]; then, with the
     * mutex released, runs the waiters [block] served ([runServed]). Completes even when the
     * caller is cancelled (critical sections are short, and the pool's bookkeeping must never be
     * left half done).
     */
    suspend inline fun <T> withLock(crossinline block: () -> T): T {
        // The slow path is a tail call, so the fast path allocates no continuation.
        if (!tryLockSpinning()) return lockedSlow { block() }
        try {
            return block()
        } finally {
            unlock()
            runServed()
        }
    }

    /** Resumes, oldest first, the waiters served under the lock (see [ServedWaiters]); call it after releasing the mutex. */
    suspend inline fun runServed() = served.runAfterUnlock(coroutineContext)

    /** Releases the mutex taken by a successful [tryLockSpinning]. */
    fun unlock() = mutex.unlock()

    /**
     * Waits for the mutex in its FIFO queue and runs [block] **on the thread that hands the mutex
     * over**: the waiter resumes on [Dispatchers.Unconfined], so the releasing thread runs the
     * queued critical sections one after another (each is a few hundred nanoseconds and never
     * suspends). Without this, the Mutex would hand itself to a coroutine that is merely scheduled
     * to run and hold it through the dispatch latency, and every later arrival would queue behind
     * it (a lock convoy).
     * Only the caller's return to its own dispatcher is dispatched, after the mutex is released.
     * The block's result is returned even if the caller was cancelled meanwhile (a checked-out
     * connection or a finished check-in must not be lost); its next suspension point throws.
     * Back on the caller's dispatcher, the waiters the block served are run ([runServed]).
     */
    suspend fun <T> lockedSlow(block: () -> T): T {
        val handOff = if (modelChecking) NonCancellable else NonCancellable + Dispatchers.Unconfined
        var result: Any? = NO_RESULT
        try {
            withContext(handOff) {
                mutex.lock()
                try {
                    result = block()
                } finally {
                    mutex.unlock()
                }
            }
        } catch (e: CancellationException) {
            if (result === NO_RESULT) throw e
        } finally {
            runServed()
        }
        @Suppress("UNCHECKED_CAST")
        return result as T
    }

    /**
     * Tries to take the mutex without suspending. Critical sections are a few hundred nanoseconds
     * and never suspend, so the holder is always a running thread: a short spin, then a few
     * [Thread.yield]s (in case the OS preempted the holder), almost always win. Suspending in
     * [Mutex.lock] instead costs a dispatch, and worse, the Mutex hands itself to the resumed
     * coroutine, which holds it while it merely waits to be scheduled, so every later arrival
     * queues behind it (a lock convoy). Fairness is kept: [Mutex.tryLock] fails while any
     * coroutine is queued in [Mutex.lock], so this never overtakes one; after the bounded attempts
     * the caller queues too.
     */
    fun tryLockSpinning(): Boolean {
        if (mutex.tryLock()) return true
        if (modelChecking) return false
        for (i in 1..LOCK_SPINS) {
            Thread.onSpinWait()
            if (!mutex.isLocked && mutex.tryLock()) return true
        }
        for (i in 1..LOCK_YIELDS) {
            Thread.yield()
            if (mutex.tryLock()) return true
        }
        return false
    }
}

/** Busy-wait iterations before a contended lock attempt yields its thread (about a microsecond or two). */
private const val LOCK_SPINS = 64

/** Thread yields before a contended lock attempt queues (suspends) in the Mutex. */
private const val LOCK_YIELDS = 2

/** Marks "the critical section has not produced a result" in [PoolLock.lockedSlow]. */
private val NO_RESULT = Any()
