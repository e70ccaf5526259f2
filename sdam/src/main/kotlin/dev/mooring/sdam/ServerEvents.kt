package dev.mooring.sdam

import dev.mooring.events.ServerAddress

/** Published when a server joins the topology, before its monitor starts. Immutable. */
public data class ServerOpeningEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    /** The server. */
    override val address: ServerAddress,
    override val timestampMillis: Long,
) : ServerEvent

/** Published when a server leaves the topology (or the topology closes) and its monitor and pool are shut down. Immutable. */
public data class ServerClosedEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    /** The server. */
    override val address: ServerAddress,
    override val timestampMillis: Long,
) : ServerEvent

/**
 * Published when a server's description changes by server description equality (a change
 * of round-trip time alone publishes nothing). Immutable.
 */
public data class ServerDescriptionChangedEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    /** The server. */
    override val address: ServerAddress,
    /** The description before the change (a default Unknown one for a new server). */
    val previousDescription: ServerDescription,
    /** The description after the change. */
    val newDescription: ServerDescription,
    override val timestampMillis: Long,
) : ServerEvent
