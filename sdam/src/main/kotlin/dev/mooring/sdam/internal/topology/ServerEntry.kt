package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.ConnectionPool
import dev.mooring.events.ServerAddress
import org.bson.types.ObjectId

/**
 * What the topology holds for one server of the current description: its monitor (none in
 * load-balanced mode) and its pool (created when the server first becomes usable). Guarded by
 * the topology's lock; [pool] is also read without it (a volatile reference) by the selection
 * loop.
 */
internal class ServerEntry(val address: ServerAddress, val monitor: MonitorHandle?) {
    @Volatile
    var pool: ConnectionPool? = null

    /**
     * How often the topology cleared [pool], per serviceId (null: the whole pool, not
     * load-balanced). Guarded by the topology's lock. An application error compares it before
     * and after reading the pool's generation (under the pool's own lock, never nested in the
     * topology's): a clear in between makes the error stale.
     */
    private val clears = HashMap<ObjectId?, Int>()

    /** The number of clears of [serviceId]'s connections (null: the whole pool) so far. */
    fun clearCount(serviceId: ObjectId?): Int = clears[serviceId] ?: 0

    /** Counts one clear of [serviceId]'s connections (null: the whole pool). */
    fun clearing(serviceId: ObjectId?) {
        clears[serviceId] = clearCount(serviceId) + 1
    }
}
