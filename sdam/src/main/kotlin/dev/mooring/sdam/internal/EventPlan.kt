package dev.mooring.sdam.internal

import dev.mooring.sdam.SdamEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologyOpeningEvent

/** One SDAM event a [dev.mooring.sdam.TopologyUpdate] will publish, before it gets an id and a timestamp. */
internal sealed interface EventPlan {
    fun toEvent(id: TopologyId, ts: Long): SdamEvent

    data object TopologyOpening : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = TopologyOpeningEvent(id, ts)
    }

    data object TopologyClosed : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = TopologyClosedEvent(id, ts)
    }

    data class TopologyChanged(val previous: TopologyDescription, val next: TopologyDescription) : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = TopologyDescriptionChangedEvent(id, previous, next, ts)
    }

    data class ServerOpening(val address: ServerAddress) : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = ServerOpeningEvent(id, address, ts)
    }

    data class ServerClosed(val address: ServerAddress) : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = ServerClosedEvent(id, address, ts)
    }

    data class ServerChanged(val previous: ServerDescription, val next: ServerDescription) : EventPlan {
        override fun toEvent(id: TopologyId, ts: Long) = ServerDescriptionChangedEvent(id, next.address, previous, next, ts)
    }

    companion object {
        /**
         * The events of one step from [before] to [after] caused by processing [processed], the
         * new description of one server (a check's outcome, or the Unknown description an
         * application error produced); null for steps without one (SRV polling).
         *
         * - A ServerDescriptionChanged is published for the processed server only, and only
         *   when its description in [after] (or [processed] itself when the step removed the
         *   server) is not spec-equal to its description in [before]. Changes the step made
         *   to *other* servers (an unchecked server a member names as primary becoming
         *   PossiblePrimary, an old primary reset to Unknown by a newer one) are no server
         *   description change of theirs: they show in the TopologyDescriptionChanged. SDAM
         *   defines the server events per processed server description, and for a
         *   multi-threaded client PossiblePrimary is synonymous with Unknown.
         * - Then ServerClosed per removed server, the TopologyDescriptionChanged when the
         *   descriptions differ, then ServerOpening per added server (as at opening, a new
         *   server is announced after the description that holds it).
         */
        fun diff(before: TopologyDescription, after: TopologyDescription, processed: ServerDescription?): List<EventPlan> {
            val out = ArrayList<EventPlan>()
            if (processed != null) {
                val old = before.servers[processed.address]
                val new = after.servers[processed.address] ?: processed
                if (old != null && !sameForEvents(old, new)) out += ServerChanged(old, new)
            }
            for (a in before.servers.keys) if (a !in after.servers) out += ServerClosed(a)
            if (!before.isSpecEqual(after)) out += TopologyChanged(before, after)
            for (a in after.servers.keys) if (a !in before.servers) out += ServerOpening(a)
            return out
        }

        /** Spec equality, with PossiblePrimary taken as Unknown (its synonym for a multi-threaded client). */
        private fun sameForEvents(a: ServerDescription, b: ServerDescription): Boolean =
            a.copy(type = a.type.unlessPossiblePrimary()) == b.copy(type = b.type.unlessPossiblePrimary())

        private fun ServerType.unlessPossiblePrimary(): ServerType = if (this == ServerType.POSSIBLE_PRIMARY) ServerType.UNKNOWN else this
    }
}
