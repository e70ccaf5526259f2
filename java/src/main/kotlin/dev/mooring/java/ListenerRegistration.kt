package dev.mooring.java

/**
 * The handle of one listener registration; [close] removes the listener. Usable in
 * try-with-resources without a checked exception.
 *
 * **Concurrency.** Thread-safe and idempotent. An event being delivered while [close] runs may
 * still reach the listener; none published after [close] returns does. Closing after the
 * cluster closed does nothing.
 */
public interface ListenerRegistration : AutoCloseable {
    /** Removes the listener. Idempotent, never blocks, never throws. */
    override fun close()
}
