package dev.mooring.sdam.internal

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerOpeningEvent
import dev.mooring.sdam.TopologyClosedEvent
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyDescriptionChangedEvent
import dev.mooring.sdam.TopologyId
import dev.mooring.sdam.TopologyOpeningEvent

/** One SDAM event a [dev.mooring.sdam.TopologyUpdate] will publish, before it gets an id and a timestamp. */
internal sealed interface EventPlan {
    fun toEvent(id: TopologyId, ts: Long): MooringEvent

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
         * The events of one step from [before] to [after]: changed servers ([first] first),
         * closed servers, the topology change, then opened servers (the order the SDAM
         * monitoring tests pin down).
         */
        fun diff(before: TopologyDescription, after: TopologyDescription, first: ServerAddress?): List<EventPlan> {
            val out = ArrayList<EventPlan>()
            val order = LinkedHashSet<ServerAddress>()
            if (first != null) order += first
            order += after.servers.keys
            for (a in order) {
                val old = before.servers[a] ?: continue
                val new = after.servers[a] ?: continue
                if (old != new) out += ServerChanged(old, new)
            }
            for (a in before.servers.keys) if (a !in after.servers) out += ServerClosed(a)
            if (!before.isSpecEqual(after)) out += TopologyChanged(before, after)
            // As at opening, a new server is announced after the description that holds it.
            for (a in after.servers.keys) if (a !in before.servers) out += ServerOpening(a)
            return out
        }
    }
}
