package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.ConnectionPool
import dev.mooring.sdam.ServerDescription
import java.util.concurrent.atomic.AtomicBoolean

/**
 * Internal API, not stable: the outcome of one server selection — the chosen server's
 * [description] as the selection saw it, and its [pool]. The server's in-flight operation count
 * was incremented by the selection; [release] decrements it when the operation ends
 * (idempotent, thread-safe, never suspends).
 */
public class SelectedServer internal constructor(
    /** The selected server's description at selection time. */
    public val description: ServerDescription,
    /** The selected server's pool. */
    public val pool: ConnectionPool,
    private val onRelease: () -> Unit,
) {
    private val released = AtomicBoolean(false)

    /** Ends the operation on this server (decrements its operation count). Idempotent. */
    public fun release() {
        if (released.compareAndSet(false, true)) onRelease()
    }
}
