package dev.mooring.events.internal

import kotlinx.coroutines.ExperimentalForInheritanceCoroutinesApi
import kotlinx.coroutines.flow.FlowCollector
import kotlinx.coroutines.flow.SharedFlow
import java.util.concurrent.atomic.AtomicInteger

/**
 * A read-only view of [upstream] that counts its active collectors in [collectors]: incremented
 * before a collection subscribes, decremented when it ends (normally, by cancellation or by an
 * exception). Publishers read the counter with one volatile load instead of
 * `MutableSharedFlow.subscriptionCount.value`, which synchronizes on the flow. A collector counted
 * a moment before it is subscribed misses what is emitted in that moment, exactly as a collector
 * that subscribes a moment later would. Thread-safe.
 */
@OptIn(ExperimentalForInheritanceCoroutinesApi::class)
internal class CountingSharedFlow<T>(
    private val upstream: SharedFlow<T>,
    private val collectors: AtomicInteger,
) : SharedFlow<T> {
    override val replayCache: List<T> get() = upstream.replayCache

    override suspend fun collect(collector: FlowCollector<T>): Nothing {
        collectors.incrementAndGet()
        try {
            upstream.collect(collector)
        } finally {
            collectors.decrementAndGet()
        }
    }
}
