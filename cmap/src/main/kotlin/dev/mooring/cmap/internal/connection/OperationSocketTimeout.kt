package dev.mooring.cmap.internal.connection

import dev.mooring.events.InternalMooringApi
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Not API ([InternalMooringApi], for `sdam`'s operations): in a coroutine's context, the commands
 * it runs on Mooring's connections have no socket timeout. For an operation under timeoutMS:
 * client-side-operations-timeout.md says socketTimeoutMS is then ignored, and the operation's own
 * deadline (the `withTimeout` around its attempts, which reports a timeout error) bounds each
 * round trip instead; a socket timeout at the same remaining time would race it and surface as a
 * network error. The handshake and the monitors keep their own timeouts.
 */
@InternalMooringApi
public object OperationSocketTimeout : AbstractCoroutineContextElement(OperationSocketTimeout.Key) {
    /** The key of [OperationSocketTimeout] in a coroutine context. */
    public object Key : CoroutineContext.Key<OperationSocketTimeout>
}
