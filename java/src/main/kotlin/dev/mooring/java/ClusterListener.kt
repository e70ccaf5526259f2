package dev.mooring.java

import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyOpeningEvent

/**
 * Receives the SDAM topology events of a cluster, in the spirit of the official driver's
 * `ClusterListener`: the cluster opened, its description changed (discovery, elections,
 * failovers, servers marked Unknown), it closed. Every method is a no-op by default.
 *
 * **Concurrency.** Called synchronously inside the topology's critical section, in publication
 * order (so [clusterOpening] comes first and [clusterClosed] last); must be quick, must not block
 * and must not call back into the cluster. An exception is logged and swallowed: it never
 * breaks the topology. Not called after the cluster or the registration is closed.
 */
public interface ClusterListener {
    /** The cluster opened, before anything else it publishes. */
    public fun clusterOpening(event: TopologyOpeningEvent) {}

    /** The cluster closed, after everything else it publishes. */
    public fun clusterClosed(event: TopologyClosedEvent) {}

    /** The topology description changed. */
    public fun clusterDescriptionChanged(event: TopologyDescriptionChangedEvent) {}
}
