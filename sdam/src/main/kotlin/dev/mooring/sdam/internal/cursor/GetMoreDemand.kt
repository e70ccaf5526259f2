package dev.mooring.sdam.internal.cursor

import dev.mooring.events.InternalMooringApi
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Not API ([InternalMooringApi], for the Java facade's publishers): a coroutine context element a
 * cursor flow's collector runs under to hold each getMore until [await] returns (a Reactive Streams
 * subscriber has demand again). Every cursor's getMore run under it, a change stream's included,
 * is sent only after [await] ([CommandCursor.getMore]), and a cursor flow ends right after a batch
 * the server reported exhausted: a subscriber whose demand
 * ends with the last document gets its completion without another request. Immutable; [await]
 * runs on the collector's coroutine.
 */
@InternalMooringApi
public class GetMoreDemand(private val awaitDemand: suspend () -> Unit) : AbstractCoroutineContextElement(Key) {
    /** Returns once the collector wants the next batch. */
    public suspend fun await(): Unit = awaitDemand()

    /** The element's key. */
    public companion object Key : CoroutineContext.Key<GetMoreDemand>
}
