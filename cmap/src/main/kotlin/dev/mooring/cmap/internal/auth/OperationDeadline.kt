package dev.mooring.cmap.internal.auth

import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * The `timeoutMS` deadline of the operation a reauthentication runs for ([deadlineNanos], a
 * [System.nanoTime] value), in the context of [Reauthentication]'s reauthenticate call: auth.md
 * "OIDC Callback" gives the machine callback the remaining timeoutMS. The operation enforces the
 * deadline itself (its own bound around the whole operation). Immutable.
 */
internal class OperationDeadline(val deadlineNanos: Long) : AbstractCoroutineContextElement(Key) {
    /** Milliseconds left before the deadline, never negative. */
    fun remainingMS(): Long = ((deadlineNanos - System.nanoTime()) / 1_000_000).coerceAtLeast(0)

    override fun toString(): String = "OperationDeadline"

    companion object Key : CoroutineContext.Key<OperationDeadline>
}
