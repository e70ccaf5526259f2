package dev.mooring.cmap.internal.connection

import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * The deadline of one connection's establishment: [connectTimeoutMS] after it started, not
 * counting time spent waiting for a human ([excluding]). [SocketConnection] puts it in the context
 * of the authentication it runs while establishing, so a mechanism can tell how much time is left
 * (auth.md "OIDC Callback": the machine callback's timeout is the remaining connectTimeoutMS) and
 * the MONGODB-OIDC human workflow can leave its callback out of it (auth.md "OIDC Human Callback").
 * Only present when connectTimeoutMS bounds the establishment (connectTimeoutMS > 0).
 * Used by the establishing coroutine only; [deadlineNanos] is volatile for diagnostics.
 */
internal class EstablishmentDeadline private constructor(val connectTimeoutMS: Long, deadlineNanos: Long) :
    AbstractCoroutineContextElement(Key) {
    /** The deadline, a [System.nanoTime] value. */
    @Volatile var deadlineNanos: Long = deadlineNanos
        private set

    /** Milliseconds left before the deadline, never negative. */
    fun remainingMS(): Long = ((deadlineNanos - System.nanoTime()) / 1_000_000).coerceAtLeast(0)

    /** Runs [block], moving the deadline later by the time it took: that time does not count against connectTimeoutMS. */
    suspend fun <T> excluding(block: suspend () -> T): T {
        val start = System.nanoTime()
        try {
            return block()
        } finally {
            deadlineNanos += System.nanoTime() - start
        }
    }

    override fun toString(): String = "EstablishmentDeadline(connectTimeoutMS=$connectTimeoutMS)"

    companion object Key : CoroutineContext.Key<EstablishmentDeadline> {
        /** The deadline of an establishment starting now, or null when [connectTimeoutMS] is 0 (no limit). */
        fun start(connectTimeoutMS: Long): EstablishmentDeadline? =
            if (connectTimeoutMS > 0) EstablishmentDeadline(connectTimeoutMS, System.nanoTime() + connectTimeoutMS * 1_000_000) else null
    }
}
