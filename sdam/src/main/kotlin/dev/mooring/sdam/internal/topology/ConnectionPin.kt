package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionPool
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Internal API, not stable: lets an [OperationRunner] operation keep its connection checked out
 * after it returns (load-balanced pinning, load-balancers.md "Behaviour With Cursors" and
 * "Behaviour With Transactions"). Run the operation under this context element: a cursor's
 * block calls [pin]; a [transaction]'s pin is given, by the runner, the connection of the first
 * command run under it in load-balanced mode ([adopts]). Either way the runner then does not
 * check the connection in, and the operations run under the pin later send over that connection
 * instead of checking one out ([connectionOf]); the pin's holder must [release] it. Released, a
 * pin never pins again. Used by one session's (or cursor's) operations, one at a time; [release]
 * may race with them and is atomic and idempotent.
 */
internal class ConnectionPin(
    /** True for a transaction's pin (transactions.md "When to unpin" says when its holder releases it). */
    internal val transaction: Boolean = false,
) : AbstractCoroutineContextElement(Key) {
    private class Held(val connection: Connection, val pool: ConnectionPool)

    private val held = AtomicReference<Held?>(null)

    @Volatile private var ended = false

    /** The pinned connection, or null. */
    internal val connection: Connection? get() = held.get()?.connection

    /** Keeps [connection] (of [pool]) checked out when the operation's block returns. */
    internal fun pin(connection: Connection, pool: ConnectionPool) {
        held.set(Held(connection, pool))
    }

    /** The pinned connection when it came from [pool] (the runner sends over it, no checkout), or null. */
    internal fun connectionOf(pool: ConnectionPool): Connection? = held.get()?.takeIf { it.pool === pool }?.connection

    /**
     * A [transaction]'s pin takes [connection] (of [pool]), which its first command used, unless
     * it holds one already or was released. True when it took it.
     */
    internal fun adopts(connection: Connection, pool: ConnectionPool): Boolean =
        transaction && !ended && held.compareAndSet(null, Held(connection, pool))

    /** Pins nothing from now on; true when a connection is pinned (then [release] it). Non-suspending. */
    internal fun endPinning(): Boolean {
        ended = true
        return held.get() != null
    }

    /** Checks the pinned connection in, and pins nothing from then on (idempotent). Detaches it before it first suspends. */
    internal suspend fun release() {
        ended = true
        val h = held.getAndSet(null) ?: return
        h.pool.checkIn(h.connection)
    }

    internal companion object Key : CoroutineContext.Key<ConnectionPin>
}
