package dev.mooring.sdam.internal.topology

import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.ConcurrentHashMap

/**
 * Starts monitors with at most [maxStarting] of them between start and their first check
 * outcome, so a hello reply listing thousands of hosts does not open thousands of sockets at
 * once: the first [maxStarting] start at once (synchronously, as before), the rest as earlier
 * ones report (or after [firstCheckBoundMillis] at the latest). Thread-safe; its coroutines are
 * children of [scope] and stop with it.
 */
internal class MonitorStarter(
    private val scope: CoroutineScope,
    private val maxStarting: Int,
    private val firstCheckBoundMillis: Long,
) {
    private val permits = Semaphore(maxStarting)
    private val waiting = ConcurrentHashMap<ServerAddress, CompletableDeferred<Unit>>()

    /** Starts [monitor] of [address] now if fewer than [maxStarting] monitors await their first check, else later. */
    fun start(address: ServerAddress, monitor: MonitorHandle) {
        val first = CompletableDeferred<Unit>()
        waiting.put(address, first)?.complete(Unit)
        scope.launch(start = CoroutineStart.UNDISPATCHED) {
            try {
                permits.withPermit {
                    if (first.isCompleted) return@withPermit // removed before its turn
                    monitor.start()
                    withTimeoutOrNull(firstCheckBoundMillis) { first.await() }
                }
            } finally {
                waiting.remove(address, first)
            }
        }
    }

    /** [address]'s monitor reported an outcome, or was removed: its slot goes to the next. Non-blocking. */
    fun released(address: ServerAddress) {
        waiting.remove(address)?.complete(Unit)
    }

    companion object {
        /** The cap on monitors between start and first outcome (see [ClusterInternals.MAX_MONITORS_STARTING]). */
        const val MAX_STARTING: Int = 64
    }
}
