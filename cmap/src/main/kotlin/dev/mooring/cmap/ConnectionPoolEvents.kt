package dev.mooring.cmap

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import org.bson.types.ObjectId
import kotlin.time.Duration

/**
 * Base type of every CMAP event (connection pool and connection events), as the CMAP spec
 * defines them. Events are immutable values; a [ConnectionPool] publishes them on its
 * [dev.mooring.events.EventBus] in the order things happened in the pool (they are published
 * under the pool's lock). Durations are measured with a monotonic clock.
 */
public sealed interface ConnectionPoolEvent : MooringEvent {
    /** The server the pool connects to. */
    public val address: ServerAddress
}

/** Why a connection was closed (CMAP `ConnectionClosedEvent.reason`). */
public enum class ConnectionClosedReason(
    /** The spec's name of the reason. */
    public val specName: String,
    /** The spec's log text of the reason. */
    public val logText: String,
) {
    /** The pool was cleared, so the connection's generation is out of date. */
    STALE("stale", "Connection became stale because the pool was cleared"),

    /** The connection was available for longer than maxIdleTimeMS. */
    IDLE("idle", "Connection has been available but unused for longer than the configured max idle time"),

    /** The connection experienced an error (network, protocol, failed establishment). */
    ERROR("error", "An error occurred while using the connection"),

    /** The pool was closed. */
    POOL_CLOSED("poolClosed", "Connection pool was closed"),
}

/** Why a checkout failed (CMAP `ConnectionCheckOutFailedEvent.reason`). */
public enum class ConnectionCheckOutFailedReason(
    /** The spec's name of the reason. */
    public val specName: String,
    /** The spec's log text of the reason. */
    public val logText: String,
) {
    /** The pool was closed. */
    POOL_CLOSED("poolClosed", "Connection pool was closed"),

    /** waitQueueTimeoutMS elapsed. */
    TIMEOUT("timeout", "Wait queue timeout elapsed without a connection becoming available"),

    /** Establishing a connection failed, or the pool was paused or cleared. */
    CONNECTION_ERROR("connectionError", "An error occurred while trying to establish a new connection"),
}

/** A pool was created (it starts paused). [options] holds the non-default pool options by their spec names. */
public data class PoolCreatedEvent(
    override val address: ServerAddress,
    /** The non-default options, keyed by their URI names (maxPoolSize, minPoolSize, maxIdleTimeMS, ...). */
    val options: Map<String, Any>,
    /** The complete settings of the pool. */
    val settings: ConnectionPoolSettings,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A pool was marked ready. */
public data class PoolReadyEvent(
    override val address: ServerAddress,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A pool was cleared (all of it, or in load-balanced mode the connections of [serviceId]). */
public data class PoolClearedEvent(
    override val address: ServerAddress,
    /** The service cleared in load-balanced mode; null otherwise. */
    val serviceId: ObjectId? = null,
    /** Whether in-use connections were interrupted as part of the clear. */
    val interruptInUseConnections: Boolean = false,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A pool was closed. */
public data class PoolClosedEvent(
    override val address: ServerAddress,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** The pool created a connection object (pending; not yet established). */
public data class ConnectionCreatedEvent(
    override val address: ServerAddress,
    /** The pool-assigned id. */
    val connectionId: Long,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A connection finished its handshake and authentication; [duration] is the time since its [ConnectionCreatedEvent]. */
public data class ConnectionReadyEvent(
    override val address: ServerAddress,
    /** The pool-assigned id. */
    val connectionId: Long,
    /** Time from creation to ready. */
    val duration: Duration,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** The pool closed a connection for [reason]; [error] is set when the reason is [ConnectionClosedReason.ERROR]. */
public data class ConnectionClosedEvent(
    override val address: ServerAddress,
    /** The pool-assigned id. */
    val connectionId: Long,
    /** Why the connection was closed. */
    val reason: ConnectionClosedReason,
    /** The error that made the connection unusable, when known. */
    val error: Throwable? = null,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A checkout started. */
public data class ConnectionCheckOutStartedEvent(
    override val address: ServerAddress,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A checkout failed for [reason] after [duration]; [error] is what the caller got. */
public data class ConnectionCheckOutFailedEvent(
    override val address: ServerAddress,
    /** Why the checkout failed. */
    val reason: ConnectionCheckOutFailedReason,
    /** Time from [ConnectionCheckOutStartedEvent] to the failure. */
    val duration: Duration,
    /** The error thrown to the caller. */
    val error: Throwable? = null,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A checkout succeeded after [duration]. */
public data class ConnectionCheckedOutEvent(
    override val address: ServerAddress,
    /** The pool-assigned id of the connection handed out. */
    val connectionId: Long,
    /** Time from [ConnectionCheckOutStartedEvent] to this event. */
    val duration: Duration,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent

/** A connection was checked back in. */
public data class ConnectionCheckedInEvent(
    override val address: ServerAddress,
    /** The pool-assigned id. */
    val connectionId: Long,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : ConnectionPoolEvent
