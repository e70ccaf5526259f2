package dev.mooring.java

import dev.mooring.cmap.CommandFailedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionReadyEvent
import kotlin.time.toJavaDuration
import java.time.Duration as JavaDuration

/**
 * The durations of the CMAP and command events as `java.time.Duration`: their `duration` properties are
 * Kotlin `kotlin.time.Duration` values, which Java code cannot read directly. Pure functions;
 * thread-safe.
 */
public object MooringEventTimes {
    /** Time from the connection's creation to ready. */
    @JvmStatic
    public fun duration(event: ConnectionReadyEvent): JavaDuration = event.duration.toJavaDuration()

    /** Time from the checkout's start to success. */
    @JvmStatic
    public fun duration(event: ConnectionCheckedOutEvent): JavaDuration = event.duration.toJavaDuration()

    /** Time from the checkout's start to failure. */
    @JvmStatic
    public fun duration(event: ConnectionCheckOutFailedEvent): JavaDuration = event.duration.toJavaDuration()

    /** Time from the command's started event to its reply. */
    @JvmStatic
    public fun duration(event: CommandSucceededEvent): JavaDuration = event.duration.toJavaDuration()

    /** Time from the command's started event to its failure. */
    @JvmStatic
    public fun duration(event: CommandFailedEvent): JavaDuration = event.duration.toJavaDuration()
}
