package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.ConnectionPool
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater

/**
 * The outcome of one server selection — the chosen server's [description] and the [topology]
 * description the selection chose it from (what the operation reads the topology type from,
 * server-selection.md "Passing read preference to mongos and load balancers"), and its [pool]. The server's in-flight operation count
 * was incremented by the selection; [release] decrements it when the operation ends
 * (idempotent, thread-safe, never suspends).
 */
internal class SelectedServer internal constructor(
    /** The selected server's description at selection time. */
    internal val description: ServerDescription,
    /** The topology description the selection ran on (not the live one, which may have changed since). */
    internal val topology: TopologyDescription,
    /** The selected server's pool. */
    internal val pool: ConnectionPool,
    /** The server's in-flight operation count, decremented once by [release]. */
    private val operationCount: AtomicInteger,
) {
    @Volatile private var released = 0

    /** Ends the operation on this server (decrements its operation count). Idempotent. */
    internal fun release() {
        if (RELEASED.compareAndSet(this, 0, 1)) operationCount.decrementAndGet()
    }

    private companion object {
        val RELEASED: AtomicIntegerFieldUpdater<SelectedServer> = AtomicIntegerFieldUpdater.newUpdater(SelectedServer::class.java, "released")
    }
}
