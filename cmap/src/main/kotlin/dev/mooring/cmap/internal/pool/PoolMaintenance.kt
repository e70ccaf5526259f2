package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.ConnectionPool
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import org.slf4j.LoggerFactory

/**
 * The pool's background "thread": a coroutine on the pool's scope that runs
 * [ConnectionPool.runMaintenance] every [intervalMS] after the end of the previous run, and at
 * once when [wake] is called (after ready() and clear()). A negative interval never runs (the
 * spec runner's `backgroundThreadIntervalMS < 0`). Stops when the pool's scope is cancelled.
 */
internal class PoolMaintenance(private val pool: ConnectionPool, private val intervalMS: Long) {
    private val wakeUps = Channel<Unit>(Channel.CONFLATED)

    fun start() {
        if (intervalMS < 0) return
        pool.scope.launch {
            while (true) {
                withTimeoutOrNull(intervalMS) { wakeUps.receive() }
                try {
                    pool.runMaintenance()
                } catch (e: CancellationException) {
                    throw e
                } catch (t: Throwable) {
                    log.warn("maintenance run of {} failed", pool, t)
                }
            }
        }
    }

    /** Asks for a run as soon as possible. Never suspends. */
    fun wake() {
        wakeUps.trySend(Unit)
    }

    private companion object {
        private val log = LoggerFactory.getLogger(PoolMaintenance::class.java)
    }
}
