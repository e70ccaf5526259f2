package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPool
import kotlinx.coroutines.currentCoroutineContext
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Internal API, not stable: lets an [OperationRunner] operation keep its connection checked out
 * after it returns (load-balanced pinning, load-balancers.md "Behaviour With Cursors"). Run the
 * operation under this context element and call [pin] from its block: the runner then does not
 * check the connection in; the pin's holder must [release] it. Used by one operation's coroutine.
 */
internal class ConnectionPin : AbstractCoroutineContextElement(Key) {
    /** The pinned connection, or null. */
    internal var connection: Connection? = null
        private set

    private var pool: ConnectionPool? = null

    /** Keeps [connection] (of [pool]) checked out when the operation's block returns. */
    internal fun pin(connection: Connection, pool: ConnectionPool) {
        this.connection = connection
        this.pool = pool
    }

    /** Checks the pinned connection in (idempotent). */
    internal suspend fun release() {
        val c = connection ?: return
        connection = null
        pool?.checkIn(c)
    }

    internal companion object Key : CoroutineContext.Key<ConnectionPin> {
        /** True when the running operation pinned [connection] (the runner must not check it in). */
        internal suspend fun isPinned(connection: Connection): Boolean = currentCoroutineContext()[Key]?.connection === connection
    }
}
