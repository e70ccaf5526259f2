package dev.mooring.sdam.internal.topology

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.events.EventListener
import kotlinx.coroutines.Job

/**
 * Internal API, not stable: hooks for the test kit and spec runners in other modules.
 * Thread-safe (stateless).
 */
public object ClusterInternals {
    /** A cluster whose monitors come from [monitorFactory] (null: the real ServerMonitor), with [listeners] registered first. */
    @JvmStatic
    @JvmOverloads
    public fun create(
        settings: MongoClusterSettings,
        monitorFactory: MonitorFactory?,
        listeners: List<EventListener> = emptyList(),
    ): MongoCluster = MongoCluster(settings, monitorFactory, listeners)

    /** The root job of [cluster]'s scope: its children are every coroutine the cluster still runs. */
    @JvmStatic
    public fun rootJob(cluster: MongoCluster): Job = cluster.rootJob

    /** Fixes the jitter of [cluster]'s overload retry backoff (client-backpressure prose tests). */
    @JvmStatic
    public fun setOverloadJitter(cluster: MongoCluster, jitter: () -> Double) {
        val r = cluster.operationRunner
        r.overloadPolicy = dev.mooring.sdam.internal.retry.OverloadRetry(r.overloadPolicy.maxRetries, r.overloadPolicy.retarget, jitter)
    }

    /** The live topology of [cluster] (to inject application errors in tests). */
    @JvmStatic
    public fun topology(cluster: MongoCluster): Topology = cluster.liveTopology
}
