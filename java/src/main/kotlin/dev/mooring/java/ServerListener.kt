package dev.mooring.java

import dev.mooring.sdam.ServerClosedEvent
import dev.mooring.sdam.ServerDescriptionChangedEvent
import dev.mooring.sdam.ServerOpeningEvent

/**
 * Receives the SDAM server events of a cluster (a server joins, changes, leaves), in the
 * spirit of the official driver's `ServerListener`; every method is a no-op by default.
 *
 * **Concurrency.** Called synchronously inside the topology's critical section, in publication
 * order; must be quick, must not block and must not call back into the cluster. An exception
 * is logged and swallowed. Not called after the cluster or the registration is closed.
 */
public interface ServerListener {
    /** A server joined the topology. */
    public fun serverOpening(event: ServerOpeningEvent) {}

    /** A server left the topology (or the topology closed). */
    public fun serverClosed(event: ServerClosedEvent) {}

    /** A server's description changed. */
    public fun serverDescriptionChanged(event: ServerDescriptionChangedEvent) {}
}
