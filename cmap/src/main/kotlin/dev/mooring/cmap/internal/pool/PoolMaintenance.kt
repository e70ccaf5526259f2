package dev.mooring.cmap.internal.pool

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import dev.mooring.events.ServerAddress
import org.slf4j.LoggerFactory

/**
 * The pool's background "thread": a coroutine on the pool's [scope] that calls [run] (one
 * maintenance run, see [PoolStateMachine.maintain]) every [intervalMS] after the end of the previous run, and at
 * once when [wake] is called (after ready() and clear()). A negative interval never runs (the
 * spec runner's `backgroundThreadIntervalMS < 0`). Stops when the pool's scope is cancelled.
 */
internal class PoolMaintenance(
    private val address: ServerAddress,
    private val scope: CoroutineScope,
    private val intervalMS: Long,
    private val run: suspend () -> Unit,
) {
    private val wakeUps = Channel<Unit>(Channel.CONFLATED)

    fun start() {
        if (intervalMS < 0) return
        scope.launch {
            while (true) {
                withTimeoutOrNull(intervalMS) { wakeUps.receive() }
                try {
                    run()
                } catch (e: CancellationException) {
                    throw e
                } catch (t: Throwable) {
                    log.warn("maintenance run of the pool for {} failed", address, t)
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
