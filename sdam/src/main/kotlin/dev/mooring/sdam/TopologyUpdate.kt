package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.EventPlan

/**
 * The result of one pure step of the topology state machine: the [previous] and the new
 * [description], the [actions] the live topology must carry out, and the SDAM events to
 * publish ([events]). Immutable.
 *
 * When the input was ignored (an outcome from a removed server, a stale topologyVersion, a
 * stale application error) [ignored] is true, [description] is [previous] and there are no
 * actions and no events.
 */
internal class TopologyUpdate(
    /** The description before the step. */
    public val previous: TopologyDescription,
    /** The description after the step (the same instance as [previous] when [ignored]). */
    public val description: TopologyDescription,
    /** The side effects to carry out, in order. */
    public val actions: List<TopologyAction>,
    /** True when the input did not change anything because the spec says to ignore it. */
    public val ignored: Boolean,
    internal val plan: List<EventPlan>,
) {
    /** True when the new description differs from the previous one (a TopologyDescriptionChangedEvent is due). */
    public val changed: Boolean get() = previous != description

    /** The servers that joined the topology in this step. */
    public val addedServers: Set<ServerAddress> get() = description.servers.keys - previous.servers.keys

    /** The servers that left the topology in this step. */
    public val removedServers: Set<ServerAddress> get() = previous.servers.keys - description.servers.keys

    /**
     * The SDAM events of this step in publication order, stamped with [topologyId] and
     * [timestampMillis]: ServerDescriptionChanged for the processed server (the checked one, or
     * the one an application error marked Unknown) when its description changed by server
     * description equality (PossiblePrimary counting as Unknown) — never for other servers the
     * step touched, such as a named primary becoming PossiblePrimary or an old primary reset to
     * Unknown, which show in the topology change only —, ServerClosed for every
     * removed server, TopologyDescriptionChanged when the topology description changed, then
     * ServerOpening for every added server. Nothing for an equal description.
     */
    public fun events(topologyId: TopologyId, timestampMillis: Long): List<SdamEvent> =
        plan.map { it.toEvent(topologyId, timestampMillis) }

    override fun toString(): String = "TopologyUpdate(ignored=$ignored, actions=$actions, description=$description)"

    internal companion object {
        fun ignored(current: TopologyDescription): TopologyUpdate = TopologyUpdate(current, current, emptyList(), true, emptyList())
    }
}
