package dev.mooring.sdam.internal.session

import java.util.UUID

/**
 * Internal API, not stable: the implicit server sessions of one cluster (driver-sessions.md,
 * "Server Session Pool"). Sessions are reused last-in first-out, so few stay alive on the
 * server. A session is never handed out when it would expire within one minute of
 * `logicalSessionTimeoutMinutes`; a dirty session (see [ServerSession.markDirty]) is discarded
 * on [release]. Sessions are not ended on the server when discarded (the server times them out).
 *
 * Thread-safe (one lock; no I/O, never suspends). [nanoTime] is the clock, replaceable in tests.
 */
internal class ServerSessionPool(private val nanoTime: () -> Long = System::nanoTime) {
    private val available = ArrayDeque<ServerSession>() // guarded by this; most recently used first

    /** The number of sessions waiting for reuse. */
    internal val size: Int get() = synchronized(this) { available.size }

    /**
     * A session for exclusive use until [release]: the most recently released one that is not
     * about to expire under [logicalSessionTimeoutMinutes], else a new one.
     */
    internal fun acquire(logicalSessionTimeoutMinutes: Int?): ServerSession {
        synchronized(this) {
            while (true) {
                val s = available.removeFirstOrNull() ?: break
                if (!expiresSoon(s, logicalSessionTimeoutMinutes, nanoTime())) return s
            }
        }
        return ServerSession(UUID.randomUUID(), nanoTime())
    }

    /**
     * Records that [session]'s id is being sent to a server now (driver-sessions.md `lastUse`:
     * updated every time the session id is sent); its expiry counts from here.
     */
    internal fun markUsed(session: ServerSession) {
        session.lastUsedNanos = nanoTime()
    }

    /**
     * Returns [session] for reuse (or discards it when dirty or about to expire, counted from its
     * last use, see [markUsed]); also prunes expiring sessions.
     */
    internal fun release(session: ServerSession, logicalSessionTimeoutMinutes: Int?) {
        val now = nanoTime() // one clock read for every check below (a read is about 20 ns, on every operation)
        synchronized(this) {
            while (available.isNotEmpty() && expiresSoon(available.last(), logicalSessionTimeoutMinutes, now)) available.removeLast()
            if (!session.isDirty && !expiresSoon(session, logicalSessionTimeoutMinutes, now)) available.addFirst(session)
        }
    }

    /** Removes and returns every pooled session (for `endSessions` when the cluster closes), most recently used first. */
    internal fun drain(): List<ServerSession> = synchronized(this) { available.toList().also { available.clear() } }

    /** True when [s] has less than one minute left before the server considers it stale (never without a timeout: load-balanced mode). */
    private fun expiresSoon(s: ServerSession, timeoutMinutes: Int?, now: Long): Boolean {
        val minutes = timeoutMinutes ?: return false
        val idleNanos = now - s.lastUsedNanos
        return idleNanos > (minutes - 1L) * NANOS_PER_MINUTE
    }

    private companion object {
        const val NANOS_PER_MINUTE = 60_000_000_000L
    }
}
