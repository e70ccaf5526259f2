package dev.mooring.java

import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent

/**
 * Receives the server heartbeat events of every monitor of a cluster, in the spirit of the
 * official driver's `ServerMonitorListener`; every method is a no-op by default.
 *
 * **Concurrency.** Called synchronously on the monitor's thread, in publication order; must be
 * quick, must not block and must not call back into the cluster. An exception is logged and
 * swallowed: it never stops a monitor. Not called after the cluster or the registration is closed.
 */
public interface ServerMonitorListener {
    /** A monitor sent hello (or started waiting for a streamed reply). */
    public fun serverHeartbeatStarted(event: ServerHeartbeatStartedEvent) {}

    /** A monitor's hello succeeded. */
    public fun serverHeartbeatSucceeded(event: ServerHeartbeatSucceededEvent) {}

    /** A monitor's hello failed. */
    public fun serverHeartbeatFailed(event: ServerHeartbeatFailedEvent) {}
}
