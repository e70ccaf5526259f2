package dev.mooring.java

import dev.mooring.sdam.ConnectionPoolSettingsBuilder

/**
 * Java builder step for the connection pool options, used inside
 * [ClusterSettingsBuilder.applyToPoolSettings]. Each setter records a step that is applied, in
 * order, over the current values when the settings are built, exactly as the Kotlin DSL's
 * `pool { }` block would; values are validated at build time ([dev.mooring.sdam.InvalidSettingsException]).
 * Not thread-safe: use it from one thread, inside the callback.
 */
public class PoolSettingsBuilder {
    @get:JvmSynthetic
    internal val steps: MutableList<ConnectionPoolSettingsBuilder.() -> Unit> = ArrayList()

    /** `maxPoolSize`; 0 = unlimited. */
    public fun maxPoolSize(value: Int): PoolSettingsBuilder = step { maxPoolSize = value }

    /** `minPoolSize`. */
    public fun minPoolSize(value: Int): PoolSettingsBuilder = step { minPoolSize = value }

    /** `maxIdleTimeMS`; 0 = never idle out. */
    public fun maxIdleTimeMS(value: Long): PoolSettingsBuilder = step { maxIdleTimeMS = value }

    /** `maxConnecting`. */
    public fun maxConnecting(value: Int): PoolSettingsBuilder = step { maxConnecting = value }

    /** `waitQueueTimeoutMS`; 0 = no limit. */
    public fun waitQueueTimeoutMS(value: Long): PoolSettingsBuilder = step { waitQueueTimeoutMS = value }

    /** How often the pool's maintenance runs, in milliseconds. */
    public fun maintenanceIntervalMS(value: Long): PoolSettingsBuilder = step { maintenanceIntervalMS = value }

    private fun step(s: ConnectionPoolSettingsBuilder.() -> Unit): PoolSettingsBuilder = apply { steps += s }
}
