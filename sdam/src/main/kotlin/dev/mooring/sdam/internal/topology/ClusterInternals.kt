package dev.mooring.sdam.internal.topology

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import kotlinx.coroutines.Job

/**
 * Internal API, not stable: hooks for the test kit and spec runners in other modules.
 * Thread-safe (stateless).
 */
public object ClusterInternals {
    /** A cluster whose monitors come from [monitorFactory] (for example scripted monitors). */
    @JvmStatic
    public fun create(settings: MongoClusterSettings, monitorFactory: MonitorFactory): MongoCluster = MongoCluster(settings, monitorFactory)

    /** The root job of [cluster]'s scope: its children are every coroutine the cluster still runs. */
    @JvmStatic
    public fun rootJob(cluster: MongoCluster): Job = cluster.rootJob
}
