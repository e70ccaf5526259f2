package dev.mooring.sdam.internal.topology

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.internal.DefaultMongoCluster
import dev.mooring.sdam.internal.implementation
import dev.mooring.events.EventListener
import kotlinx.coroutines.Job

/**
 * Test hooks (internal: for sdam's own tests and, as friends, kotest-spec's spec runners and
 * cluster tests; never API). Thread-safe (stateless).
 */
internal object ClusterInternals {
    /** A cluster whose monitors come from [monitorFactory] (null: the real ServerMonitor), with [listeners] registered first. */
    @JvmStatic
    @JvmOverloads
    internal fun create(
        settings: MongoClusterSettings,
        monitorFactory: MonitorFactory?,
        listeners: List<EventListener> = emptyList(),
    ): MongoCluster = DefaultMongoCluster(settings, monitorFactory, listeners)

    /** The root job of [cluster]'s scope: its children are every coroutine the cluster still runs. */
    @JvmStatic
    internal fun rootJob(cluster: MongoCluster): Job = cluster.implementation().rootJob

    /** Fixes the jitter of [cluster]'s overload retry backoff (client-backpressure prose tests). */
    @JvmStatic
    internal fun setOverloadJitter(cluster: MongoCluster, jitter: () -> Double) {
        val r = cluster.implementation().operationRunner
        r.overloadPolicy = dev.mooring.sdam.internal.retry.OverloadRetry(r.overloadPolicy.maxRetries, r.overloadPolicy.retarget, jitter)
    }

    /** The live topology of [cluster] (to inject application errors in tests). */
    @JvmStatic
    internal fun topology(cluster: MongoCluster): Topology = cluster.implementation().liveTopology
}
