package dev.mooring.java

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent

/**
 * Receives the CMAP connection pool and connection events of every pool of a cluster, in the
 * spirit of the official driver's `ConnectionPoolListener`: one method per event type, each a
 * no-op by default, so a Java class overrides only what it needs.
 *
 * **Concurrency.** Methods are called synchronously on the thread that publishes the event
 * (often under the pool's lock), one event at a time for the whole cluster, in publication
 * order: every listener of a cluster sees the same order of all its events.
 * They must be quick, must not block and must not call back into the cluster (no `close()`, no
 * waiting on a future of the cluster). An exception thrown by a method is logged and swallowed:
 * it never breaks the pool, and the other listeners still see the event. After the cluster is
 * closed (or the registration is closed) no method is called again.
 */
public interface ConnectionPoolListener {
    /** A pool was created (it starts paused). */
    public fun connectionPoolCreated(event: PoolCreatedEvent) {}

    /** A pool was marked ready. */
    public fun connectionPoolReady(event: PoolReadyEvent) {}

    /** A pool was cleared. */
    public fun connectionPoolCleared(event: PoolClearedEvent) {}

    /** A pool was closed. */
    public fun connectionPoolClosed(event: PoolClosedEvent) {}

    /** A connection object was created (not yet established). */
    public fun connectionCreated(event: ConnectionCreatedEvent) {}

    /** A connection finished its handshake; see [MooringEventTimes.duration] for its duration as a `java.time.Duration`. */
    public fun connectionReady(event: ConnectionReadyEvent) {}

    /** A connection was closed. */
    public fun connectionClosed(event: ConnectionClosedEvent) {}

    /** A checkout started. */
    public fun connectionCheckOutStarted(event: ConnectionCheckOutStartedEvent) {}

    /** A checkout failed. */
    public fun connectionCheckOutFailed(event: ConnectionCheckOutFailedEvent) {}

    /** A checkout succeeded. */
    public fun connectionCheckedOut(event: ConnectionCheckedOutEvent) {}

    /** A connection was checked back in. */
    public fun connectionCheckedIn(event: ConnectionCheckedInEvent) {}
}
