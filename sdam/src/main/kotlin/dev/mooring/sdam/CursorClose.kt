package dev.mooring.sdam

import kotlinx.coroutines.CancellationException

/**
 * Closes a cursor of [MongoCluster.runCursorCommand] with a `timeoutMS` of its own
 * (client-side-operations-timeout.md "Cursors": a `close` MUST honour a `timeoutMS` set for it):
 * cancel the coroutine collecting the cursor's flow with this exception, e.g.
 * `job.cancel(CursorCloseCancellation(500))`, and the `killCursors` sent for a cursor still open
 * on the server runs under [timeoutMS] (0: no limit, then bounded by serverSelectionTimeoutMS)
 * instead of a refreshed timeoutMS of the cursor. Any other cancellation closes the cursor with
 * the cursor's own timeoutMS, refreshed. Immutable; thread-safe.
 */
public class CursorCloseCancellation(
    /** The `timeoutMS` of the close (non-negative). */
    public val timeoutMS: Long,
) : CancellationException("the cursor is closed (close timeoutMS=$timeoutMS)") {
    init {
        require(timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
    }
}
