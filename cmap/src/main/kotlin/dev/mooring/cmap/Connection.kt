package dev.mooring.cmap

import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import org.bson.types.ObjectId

/**
 * One connection to one server.
 *
 * Concurrency: a connection is single-track. At most one [command] may be in flight at a time;
 * a second concurrent call is a programming error and fails at once with
 * [IllegalStateException]. Cancelling the coroutine that runs [command] closes the connection
 * (its wire state is unknown afterwards). [close] is idempotent, never suspends and never
 * blocks; after it, [command] fails with a network error.
 */
public interface Connection {
    /** The server this connection talks to. */
    public val address: ServerAddress

    /** The id the pool assigned (unique within the pool, starting at 1); the CMAP events' `connectionId`. */
    public val id: Long

    /** The pool generation this connection was created in (per serviceId in load-balanced mode). */
    public val generation: Int

    /** What the handshake learned; null until the handshake completes. */
    public val description: ConnectionDescription?

    /** True once [close] was called or the connection failed. */
    public val isClosed: Boolean

    /** Runs [command] against [database] and returns the reply document (`ok: 1` or a typed error). */
    public suspend fun command(database: String, command: BsonDocument): BsonDocument

    /** Closes the socket. Idempotent, non-blocking. */
    public fun close()
}

/**
 * What a completed handshake told us about the server at the other end of one connection.
 * Immutable.
 */
public data class ConnectionDescription(
    val address: ServerAddress,
    /** The full hello / legacy hello reply, for SDAM. */
    val helloReply: BsonDocument,
    val minWireVersion: Int,
    val maxWireVersion: Int,
    val maxBsonObjectSize: Int,
    val maxMessageSizeBytes: Int,
    val maxWriteBatchSize: Int,
    /** The server-side id of this connection (`connectionId` in the hello reply), if reported. */
    val serverConnectionId: Long?,
    /** The serviceId reported by a load balancer, if any. */
    val serviceId: ObjectId?,
    /** True when the server answered `helloOk: true` to the legacy hello. */
    val helloOk: Boolean,
    /** The compressor both sides agreed on, or null. */
    val compressor: String?,
) {
    /**
     * `logicalSessionTimeoutMinutes` from [helloReply], or null when the server did not report it
     * (it does not support sessions, unless it is behind a load balancer: [serviceId]). Read from
     * the reply once, here: the session logic asks it on every command.
     */
    public val logicalSessionTimeoutMinutes: Int? =
        helloReply["logicalSessionTimeoutMinutes"]?.takeIf { it.isNumber }?.asNumber()?.intValue()

    public companion object {
        public const val DEFAULT_MAX_BSON_OBJECT_SIZE: Int = 16 * 1024 * 1024
        public const val DEFAULT_MAX_MESSAGE_SIZE_BYTES: Int = 48_000_000
        public const val DEFAULT_MAX_WRITE_BATCH_SIZE: Int = 100_000
    }
}

/**
 * Connections that the pool can establish. The pool calls [create] under its lock (it must not
 * do I/O) and [EstablishableConnection.establish] outside it.
 */
public fun interface ConnectionFactory {
    /** A not-yet-connected connection with the pool-assigned [id] and [generation]. No I/O. */
    public fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection
}

/** A connection that still has to connect, handshake and authenticate. */
public interface EstablishableConnection : Connection {
    /**
     * Connects, runs the handshake and authenticates. Throws a [MongoNetworkException],
     * [MongoCommandException], [MongoProtocolException] or an authentication error; on any
     * failure (and on cancellation) the socket is closed before this returns.
     */
    public suspend fun establish()
}
