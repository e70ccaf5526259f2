package dev.mooring.sdam

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress

/** Published when a server joins the topology, before its monitor starts. Immutable. */
public data class ServerOpeningEvent(
    /** The topology. */
    val topologyId: TopologyId,
    /** The server. */
    val address: ServerAddress,
    override val timestampMillis: Long,
) : MooringEvent

/** Published when a server leaves the topology (or the topology closes) and its monitor and pool are shut down. Immutable. */
public data class ServerClosedEvent(
    /** The topology. */
    val topologyId: TopologyId,
    /** The server. */
    val address: ServerAddress,
    override val timestampMillis: Long,
) : MooringEvent

/**
 * Published when a server's description changes by server description equality (a change
 * of round-trip time alone publishes nothing). Immutable.
 */
public data class ServerDescriptionChangedEvent(
    /** The topology. */
    val topologyId: TopologyId,
    /** The server. */
    val address: ServerAddress,
    /** The description before the change (a default Unknown one for a new server). */
    val previousDescription: ServerDescription,
    /** The description after the change. */
    val newDescription: ServerDescription,
    override val timestampMillis: Long,
) : MooringEvent
