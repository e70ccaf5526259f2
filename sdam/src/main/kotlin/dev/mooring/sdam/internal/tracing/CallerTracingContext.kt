package dev.mooring.sdam.internal.tracing

import dev.mooring.events.InternalMooringApi
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.internal.DefaultMongoCluster
import io.opentelemetry.context.Context
import io.opentelemetry.extension.kotlin.asContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/**
 * Not API ([InternalMooringApi], for the Java facade): carries a non-coroutine caller's OpenTelemetry context (the Java
 * facade's callers) into the coroutine that runs its operation, so their current span is the
 * parent of the operation span. Thread-safe.
 */
@InternalMooringApi
public object CallerTracingContext {
    /**
     * The calling thread's current OpenTelemetry context as a coroutine context element, for an
     * operation of [cluster]; empty when [cluster] does not trace (or is not a cluster of the factory functions) (whatever the classpath: a
     * cluster without tracing costs its callers nothing) or no context is current (then nothing
     * is allocated either).
     */
    public fun current(cluster: MongoCluster): CoroutineContext = if ((cluster as? DefaultMongoCluster)?.tracer != null) Captured.current() else EmptyCoroutineContext

    /** Touches OpenTelemetry types; loaded only when the API is present (a cluster has a tracer only then). */
    private object Captured {
        fun current(): CoroutineContext {
            val context = Context.current()
            return if (context == Context.root()) EmptyCoroutineContext else context.asContextElement()
        }
    }
}
