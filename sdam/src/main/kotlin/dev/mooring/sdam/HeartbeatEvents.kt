package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import org.bson.BsonDocument

/**
 * Published when a monitor sends hello (or, with [awaited], starts waiting for the next
 * streamed reply); when it opens a new connection, just before the socket is created. Every
 * started event is followed by exactly one succeeded or failed event. Immutable.
 */
public data class ServerHeartbeatStartedEvent(
    /** The monitored server. */
    override val address: ServerAddress,
    /** The driver-side id of the monitoring connection, or null before it exists. */
    override val connectionId: Long?,
    /** True for the streaming (awaitable hello) protocol. */
    override val awaited: Boolean,
    override val timestampMillis: Long,
) : ServerHeartbeatEvent

/** Published when a monitor's hello succeeded. Immutable. */
public data class ServerHeartbeatSucceededEvent(
    /** The monitored server. */
    override val address: ServerAddress,
    /** The driver-side id of the monitoring connection. */
    override val connectionId: Long?,
    /** The server's reply. */
    val reply: BsonDocument,
    /** How long the check took, in nanoseconds (for awaited checks: since the started event). */
    val durationNanos: Long,
    /** True for the streaming (awaitable hello) protocol. */
    override val awaited: Boolean,
    override val timestampMillis: Long,
) : ServerHeartbeatEvent

/** Published when a monitor's hello failed (`ok: 0` or an I/O error). Immutable. */
public data class ServerHeartbeatFailedEvent(
    /** The monitored server. */
    override val address: ServerAddress,
    /** The driver-side id of the monitoring connection, or null if none was established. */
    override val connectionId: Long?,
    /** Why the check failed. */
    val failure: Throwable,
    /** How long the check took, in nanoseconds. */
    val durationNanos: Long,
    /** True for the streaming (awaitable hello) protocol. */
    override val awaited: Boolean,
    override val timestampMillis: Long,
) : ServerHeartbeatEvent
