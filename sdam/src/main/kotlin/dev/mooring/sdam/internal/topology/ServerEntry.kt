package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.ConnectionPool
import dev.mooring.events.ServerAddress

/**
 * What the topology holds for one server of the current description: its monitor (none in
 * load-balanced mode) and its pool (created when the server first becomes usable). Guarded by
 * the topology's lock; [pool] is also read without it (a volatile reference) by the selection
 * loop.
 */
internal class ServerEntry(val address: ServerAddress, val monitor: MonitorHandle?) {
    @Volatile
    var pool: ConnectionPool? = null
}
