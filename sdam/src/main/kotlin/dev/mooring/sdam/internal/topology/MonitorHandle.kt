package dev.mooring.sdam.internal.topology

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import kotlinx.coroutines.CoroutineScope

/**
 * Internal API, not stable: what the live [Topology] needs from one server monitor. The
 * production implementation adapts `dev.mooring.sdam.internal.monitor.ServerMonitor`; tests may
 * plug in scripted monitors.
 *
 * Concurrency: every member may be called from any thread. [requestImmediateCheck] and
 * [cancelCheck] never suspend and never block. [close] stops the monitor (and any RTT
 * coroutine), closes its sockets and returns when they have stopped; after it the other calls
 * do nothing.
 */
internal interface MonitorHandle {
    /** Starts the monitor's coroutines. Called once, after the ServerOpening event was published. */
    fun start()

    /** Wakes a sleeping monitor for an immediate check (the monitor enforces minHeartbeatFrequencyMS). */
    fun requestImmediateCheck()

    /** Aborts the in-progress check's connection (an application connection saw a network error). */
    fun cancelCheck()

    /** Stops the monitor and waits until its coroutines have stopped. Idempotent; completes when cancelled. */
    suspend fun close()
}

/**
 * Internal API, not stable: where a monitor delivers each check outcome. The topology applies
 * it in its critical section. Called sequentially for one monitor, never concurrently.
 * Cancellation: the call may be cancelled while it waits for the topology's lock (when the
 * monitor is being closed); the outcome is then dropped.
 */
internal fun interface CheckOutcomeSink {
    /**
     * Applies one check outcome: [description] (from hello, or Unknown after a failure),
     * whether to [clearPool] (a failed check) and whether to [interruptInUseConnections]
     * (a network timeout), with the check's [error] if any.
     */
    suspend fun onCheckOutcome(
        description: ServerDescription,
        error: Throwable?,
        clearPool: Boolean,
        interruptInUseConnections: Boolean,
    )
}

/**
 * Internal API, not stable: creates the monitor for [address]. It must do no I/O and start
 * nothing until [MonitorHandle.start]; its coroutines must be children of [scope].
 * Thread-safe.
 */
internal fun interface MonitorFactory {
    /** A new, not yet started monitor for [address] that reports to [sink]. */
    fun create(address: ServerAddress, scope: CoroutineScope, sink: CheckOutcomeSink): MonitorHandle
}
