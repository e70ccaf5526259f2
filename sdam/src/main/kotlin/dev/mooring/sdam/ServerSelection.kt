package dev.mooring.sdam

import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.ReplicaSetSelector
import kotlin.random.Random

/**
 * Server selection (server selection and max staleness specs) as pure functions over a
 * [TopologyDescription]. No I/O, no clock, no coroutines, no shared state: safe to call from
 * any thread. Randomness comes only from the [Random] the caller passes. The waiting loop,
 * timeouts and log messages belong to the live topology.
 */
internal object ServerSelection {
    /** The default size of the latency window (localThresholdMS). */
    public const val DEFAULT_LOCAL_THRESHOLD_MS: Long = 15

    /** The default heartbeatFrequencyMS of multi-threaded clients. */
    public const val DEFAULT_HEARTBEAT_FREQUENCY_MS: Long = 10_000

    /** idleWritePeriodMS of the max staleness spec. */
    public const val IDLE_WRITE_PERIOD_MS: Long = 10_000

    /** smallestMaxStalenessSeconds of the max staleness spec. */
    public const val SMALLEST_MAX_STALENESS_SECONDS: Long = 90

    /**
     * Raises the errors selection must raise at once: [MongoIncompatibleServerException] when the
     * topology is not [TopologyDescription.compatible]; [InvalidReadPreferenceException] when a
     * read in a replica set topology has a positive maxStalenessSeconds below
     * `(heartbeatFrequencyMS + idleWritePeriodMS) / 1000` or below [SMALLEST_MAX_STALENESS_SECONDS].
     */
    @JvmStatic
    public fun validate(topology: TopologyDescription, operation: ServerSelectionOperation, heartbeatFrequencyMS: Long) {
        topology.incompatibleServer?.let { throw MongoIncompatibleServerException(topology.compatibilityError!!, it.address) }
        val rp = (operation as? ServerSelectionOperation.Read)?.readPreference ?: return
        val max = rp.maxStalenessSeconds ?: return
        if (max <= 0 || !topology.type.isReplicaSet) return
        if (max * 1000 < heartbeatFrequencyMS + IDLE_WRITE_PERIOD_MS) {
            throw InvalidReadPreferenceException(
                "maxStalenessSeconds ($max) must be at least heartbeatFrequencyMS + idleWritePeriodMS " +
                    "(${heartbeatFrequencyMS}ms + ${IDLE_WRITE_PERIOD_MS}ms)",
            )
        }
        if (max < SMALLEST_MAX_STALENESS_SECONDS) {
            throw InvalidReadPreferenceException("maxStalenessSeconds ($max) must be at least $SMALLEST_MAX_STALENESS_SECONDS")
        }
    }

    /**
     * The suitable servers for [operation] (after [validate]): by topology type — Unknown:
     * none; Single: the server when available; LoadBalanced: the load balancer; Sharded: every
     * mongos; replica sets: the read preference's mode, maxStalenessSeconds and tag sets for
     * reads, the primary for writes. Servers in [deprioritized] are left out unless that
     * leaves nothing suitable, in which case the selection is repeated with them.
     */
    @JvmStatic
    @JvmOverloads
    public fun suitableServers(
        topology: TopologyDescription,
        operation: ServerSelectionOperation,
        heartbeatFrequencyMS: Long = DEFAULT_HEARTBEAT_FREQUENCY_MS,
        deprioritized: Set<ServerAddress> = emptySet(),
    ): List<ServerDescription> {
        validate(topology, operation, heartbeatFrequencyMS)
        val all = topology.serverList
        if (deprioritized.isNotEmpty()) {
            val preferred = suitableAmong(topology, all.filter { it.address !in deprioritized }, operation, heartbeatFrequencyMS)
            if (preferred.isNotEmpty()) return preferred
        }
        return suitableAmong(topology, all, operation, heartbeatFrequencyMS)
    }

    /**
     * The servers of [suitable] whose average RTT is within [localThresholdMS] of the fastest
     * one's (a server without an RTT counts as 0 ms). Order is kept.
     */
    @JvmStatic
    public fun latencyWindow(suitable: List<ServerDescription>, localThresholdMS: Long): List<ServerDescription> {
        require(localThresholdMS >= 0) { "localThresholdMS must not be negative, was $localThresholdMS" }
        if (suitable.size <= 1) return suitable
        val fastest = suitable.minOf { it.roundTripTimeMillis ?: 0.0 }
        return suitable.filter { (it.roundTripTimeMillis ?: 0.0) <= fastest + localThresholdMS }
    }

    /**
     * Picks one server of [window] by the "power of two random choices": two distinct servers
     * at random, the one with the lower [operationCount] wins (the first drawn on a tie).
     * Null when [window] is empty; its only server when it has one.
     */
    @JvmStatic
    public fun chooseInWindow(window: List<ServerDescription>, operationCount: (ServerAddress) -> Int, random: Random): ServerDescription? {
        if (window.size <= 1) return window.firstOrNull()
        val i = random.nextInt(window.size)
        var j = random.nextInt(window.size - 1)
        if (j >= i) j++
        val a = window[i]
        val b = window[j]
        return if (operationCount(b.address) < operationCount(a.address)) b else a
    }

    /**
     * One selection attempt: [validate], [suitableServers], [latencyWindow], [chooseInWindow].
     * Null when no server is suitable (the caller requests an immediate check and waits).
     */
    @JvmStatic
    public fun select(
        topology: TopologyDescription,
        operation: ServerSelectionOperation,
        localThresholdMS: Long,
        heartbeatFrequencyMS: Long,
        deprioritized: Set<ServerAddress>,
        operationCount: (ServerAddress) -> Int,
        random: Random,
    ): ServerDescription? {
        val suitable = suitableServers(topology, operation, heartbeatFrequencyMS, deprioritized)
        return chooseInWindow(latencyWindow(suitable, localThresholdMS), operationCount, random)
    }

    /** The staleness of [server] in milliseconds by the max staleness spec (0 for non-secondaries). */
    @JvmStatic
    public fun stalenessMillis(topology: TopologyDescription, server: ServerDescription, heartbeatFrequencyMS: Long): Long =
        ReplicaSetSelector.stalenessMillis(topology, server, heartbeatFrequencyMS)

    private fun suitableAmong(
        topology: TopologyDescription,
        servers: List<ServerDescription>,
        operation: ServerSelectionOperation,
        heartbeatFrequencyMS: Long,
    ): List<ServerDescription> = if (operation is ServerSelectionOperation.Pinned) {
        servers.filterFew { it.address == operation.address && it.type == ServerType.MONGOS }
    } else when (topology.type) {
        TopologyType.UNKNOWN -> emptyList()
        TopologyType.SINGLE -> servers.filterFew { it.isAvailable }
        TopologyType.LOAD_BALANCED -> servers.filterFew { it.type == ServerType.LOAD_BALANCER }
        TopologyType.SHARDED -> servers.filterFew { it.type == ServerType.MONGOS }
        TopologyType.REPLICA_SET_WITH_PRIMARY, TopologyType.REPLICA_SET_NO_PRIMARY -> when (operation) {
            is ServerSelectionOperation.Write -> servers.filterFew { it.type == ServerType.RS_PRIMARY }
            is ServerSelectionOperation.Read ->
                ReplicaSetSelector.read(topology, servers, operation.readPreference, heartbeatFrequencyMS)
            is ServerSelectionOperation.Pinned -> emptyList() // answered above
        }
    }

    /** [filter] sized for the usual outcome of one or no server (no ten-slot list per selection); this list itself when all qualify. Order is kept. */
    private inline fun List<ServerDescription>.filterFew(predicate: (ServerDescription) -> Boolean): List<ServerDescription> {
        var only: ServerDescription? = null
        var count = 0
        for (i in indices) {
            val s = this[i]
            if (predicate(s)) {
                if (count == 0) only = s
                count++
            }
        }
        return when (count) {
            0 -> emptyList()
            size -> this // all of them (a single server that qualifies): no copy
            1 -> listOf(only!!)
            else -> filterTo(ArrayList(count), predicate)
        }
    }
}
