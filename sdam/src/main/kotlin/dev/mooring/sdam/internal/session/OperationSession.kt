package dev.mooring.sdam.internal.session

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.sdam.MongoSessionNotSupportedException
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument

/**
 * Internal API, not stable: the session of one operation (or one cursor) — the explicit
 * session's [ServerSession], or an implicit one taken from [pool] after the first checkout of a
 * connection that supports sessions (driver-sessions.md, "Sessions and Connections").
 * [timeoutMinutes] gives the topology's `logicalSessionTimeoutMinutes` for the pool (null in
 * load-balanced mode). [clusterClock] is the explicit session's cluster time (null for an
 * implicit session), gossiped with the cluster's. [onRelease] runs once, at [release] (an
 * explicit session's hold ends). Used from the operation's coroutine only; [release] is
 * idempotent.
 */
internal class OperationSession(
    private val pool: ServerSessionPool,
    private val explicit: ServerSession?,
    private val timeoutMinutes: () -> Int?,
    val clusterClock: ClusterClock? = null,
    private val onRelease: () -> Unit = {},
) {
    private var implicit: ServerSession? = null
    private var released = false
    private var decided = false

    /** The server session in use, if any (explicit, or implicit once acquired). */
    val current: ServerSession? get() = explicit ?: implicit

    /**
     * [command] with this session's `lsid` for [connection], or [command] itself when the
     * connection does not support sessions and the session is implicit (an implicit session's
     * id is never sent to such a server, not even by a retry or a getMore after a connection that
     * supports them). Throws [MongoSessionNotSupportedException] for an explicit session on such
     * a connection. Records the server session's last use (driver-sessions.md `lastUse`).
     */
    fun attach(command: BsonDocument, connection: Connection): BsonDocument {
        val session = when {
            explicit != null -> if (supportsSessions(connection)) explicit else throw MongoSessionNotSupportedException(connection.address)
            decided -> implicit?.takeIf { supportsSessions(connection) }
            else -> {
                // the first connection decides for the whole operation: a cursor's getMores send the lsid its command sent
                decided = true
                if (supportsSessions(connection) && !released) pool.acquire(timeoutMinutes()).also { implicit = it } else null
            }
        } ?: return command
        pool.markUsed(session)
        return AppendedCommand.append(command, "lsid", session.lsid) // appended, not copied (see AppendedCommand)
    }

    /**
     * Records the [error] of a command sent in this session: a network error, or a command
     * interrupted while in flight (timeoutMS expiring mid-command, a socket timeout in effect, or
     * the caller's cancellation), marks the server session dirty (driver-sessions.md: the server's
     * view of the session is unknown).
     */
    fun onError(error: Throwable) {
        if (error is MongoNetworkException || error is CancellationException) current?.markDirty()
    }

    /** Returns an implicit server session to the pool (an explicit one stays with its ClientSession, whose hold ends). Idempotent. */
    fun release() {
        if (released) return
        released = true
        implicit?.let { pool.release(it, timeoutMinutes()) }
        implicit = null
        onRelease()
    }

    companion object {
        /** True when [connection]'s handshake reported `logicalSessionTimeoutMinutes` or it is behind a load balancer. */
        fun supportsSessions(connection: Connection): Boolean {
            val d = connection.description ?: return false
            return d.serviceId != null || d.logicalSessionTimeoutMinutes != null
        }
    }
}
