package dev.mooring.sdam


/** Published once when a topology (client) is created, before anything else it publishes. Immutable. */
public data class TopologyOpeningEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    override val timestampMillis: Long,
) : TopologyEvent

/**
 * Published when the topology description changes (by [TopologyDescription.equals]); the
 * first one of a topology has the empty Unknown description as [previousDescription]. Immutable.
 */
public data class TopologyDescriptionChangedEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    /** The description before the change. */
    val previousDescription: TopologyDescription,
    /** The description after the change. */
    val newDescription: TopologyDescription,
    override val timestampMillis: Long,
) : TopologyEvent

/** Published last when a topology is closed, after its servers are closed and its description is Unknown. Immutable. */
public data class TopologyClosedEvent(
    /** The topology. */
    override val topologyId: TopologyId,
    override val timestampMillis: Long,
) : TopologyEvent
