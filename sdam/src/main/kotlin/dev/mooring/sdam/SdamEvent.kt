package dev.mooring.sdam

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress

/**
 * Base type of every SDAM event (server discovery and monitoring, and server monitoring
 * heartbeats), as the SDAM spec defines them: a [TopologyEvent], a [ServerEvent] or a
 * [ServerHeartbeatEvent]. Sealed, so a `when` over it is exhaustive. Events are immutable
 * values, safe to share between threads; a cluster publishes them on its
 * [dev.mooring.events.EventBus] in the order things happened to the topology (heartbeats in the
 * order of each monitor's checks).
 */
public sealed interface SdamEvent : MooringEvent

/** An event of the topology as a whole: [TopologyOpeningEvent], [TopologyDescriptionChangedEvent], [TopologyClosedEvent]. Immutable. */
public sealed interface TopologyEvent : SdamEvent {
    /** The topology. */
    public val topologyId: TopologyId
}

/** An event of one server of the topology: [ServerOpeningEvent], [ServerDescriptionChangedEvent], [ServerClosedEvent]. Immutable. */
public sealed interface ServerEvent : SdamEvent {
    /** The topology. */
    public val topologyId: TopologyId

    /** The server. */
    public val address: ServerAddress
}

/**
 * An event of one server monitor's check: [ServerHeartbeatStartedEvent], then exactly one of
 * [ServerHeartbeatSucceededEvent] or [ServerHeartbeatFailedEvent]. Immutable.
 */
public sealed interface ServerHeartbeatEvent : SdamEvent {
    /** The monitored server. */
    public val address: ServerAddress

    /** The driver-side id of the monitoring connection, or null before one exists. */
    public val connectionId: Long?

    /** True for the streaming (awaitable hello) protocol. */
    public val awaited: Boolean
}
