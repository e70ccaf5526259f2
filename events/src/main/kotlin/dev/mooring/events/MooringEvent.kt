package dev.mooring.events

/**
 * Base type of every event Mooring publishes (CMAP pool and connection events, SDAM server,
 * topology and heartbeat events). Events are immutable values.
 */
public interface MooringEvent {
    /** Wall-clock time the event was created, in milliseconds since the epoch. */
    public val timestampMillis: Long
}
