package dev.mooring.java

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent

/**
 * Receives the command monitoring events of a cluster's application commands (never the
 * handshake, authentication or heartbeats), in the spirit of the official driver's
 * `CommandListener`; every method is a no-op by default. Sensitive commands arrive redacted.
 *
 * **Concurrency.** Called synchronously on the thread that runs the command, one event at a
 * time for the whole cluster, in publication order; must be quick, must not block and must not
 * call back into the cluster. An exception is logged and swallowed: it never fails the command.
 * Not called after the cluster or the registration is closed.
 */
public interface CommandListener {
    /** A command is about to be sent. */
    public fun commandStarted(event: CommandStartedEvent) {}

    /** A command's reply arrived with `ok: 1`. */
    public fun commandSucceeded(event: CommandSucceededEvent) {}

    /** A command failed (an `ok: 0` reply, a network error, a timeout or a cancellation). */
    public fun commandFailed(event: CommandFailedEvent) {}
}
