package dev.mooring.cmap

import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import org.bson.types.ObjectId
import kotlin.time.Duration

/**
 * Base type of the command monitoring events of the MongoDB "Command Logging and Monitoring"
 * specification: one [CommandStartedEvent] per application command, followed by exactly one
 * [CommandSucceededEvent] or [CommandFailedEvent] with the same [requestId].
 *
 * Only application commands are monitored (those run through `MongoCluster.runCommand`, its
 * retryable forms and `withConnection`): never the connection handshake, authentication or
 * the SDAM monitors' heartbeats. Events are immutable values, published on the cluster's
 * [dev.mooring.events.EventBus] by the coroutine that runs the command, in the order things
 * happened on that connection. Sensitive commands are redacted (see [CommandEvent.command] and
 * [CommandSucceededEvent.reply]): their documents are empty.
 */
public sealed interface CommandEvent : MooringEvent {
    /** The command's name: the first key of the command document. */
    public val commandName: String

    /** The database the command ran against (its `$db`). */
    public val databaseName: String

    /** The wire protocol request id of the message that carried the command. */
    public val requestId: Int

    /**
     * Ties together the commands of one operation (its retries); by default the request id of
     * the operation's first command, as the specification suggests. Never null for events
     * Mooring publishes.
     */
    public val operationId: Long?

    /** The driver's id of the connection (the pool-assigned id of the CMAP events). */
    public val connectionId: Long

    /** The server's id of the connection (`connectionId` of its hello reply), when it reported one. */
    public val serverConnectionId: Long?

    /** The server the command went to. */
    public val address: ServerAddress

    /** The service the command went to through a load balancer, or null. */
    public val serviceId: ObjectId?
}

/**
 * A command is about to be sent. [command] is the document as sent, including `$db`, `lsid`,
 * `txnNumber` and `$readPreference` when present; it is an empty document for a sensitive
 * command (`authenticate`, `saslStart`, `saslContinue`, `getnonce`, `createUser`, `updateUser`,
 * `copydbgetnonce`, `copydbsaslstart`, `copydb`, and `hello` or legacy hello carrying
 * `speculativeAuthenticate`). The document is owned by the event: do not modify it.
 */
public data class CommandStartedEvent(
    /** The command document as sent (empty when redacted). */
    val command: BsonDocument,
    override val databaseName: String,
    override val commandName: String,
    override val requestId: Int,
    override val operationId: Long?,
    override val connectionId: Long,
    override val serverConnectionId: Long?,
    override val address: ServerAddress,
    override val serviceId: ObjectId? = null,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : CommandEvent

/**
 * A command's reply arrived with `ok: 1` (a reply carrying a `writeConcernError` included).
 * [reply] is empty for a sensitive command; [duration] runs from just before the message was
 * sent to the reply's arrival (monotonic clock).
 */
public data class CommandSucceededEvent(
    /** The reply document (empty when redacted). */
    val reply: BsonDocument,
    /** Time from the started event to the reply. */
    val duration: Duration,
    override val databaseName: String,
    override val commandName: String,
    override val requestId: Int,
    override val operationId: Long?,
    override val connectionId: Long,
    override val serverConnectionId: Long?,
    override val address: ServerAddress,
    override val serviceId: ObjectId? = null,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : CommandEvent

/**
 * A command failed: an `ok: 0` reply ([MongoCommandException]), a network or protocol error,
 * a timeout or a cancellation while the command was in flight. [failure] is the error the
 * caller of the command saw; [duration] runs from the started event to the failure.
 */
public data class CommandFailedEvent(
    /** What went wrong. For a sensitive command, the server's reply is not part of it. */
    val failure: Throwable,
    /** Time from the started event to the failure. */
    val duration: Duration,
    override val databaseName: String,
    override val commandName: String,
    override val requestId: Int,
    override val operationId: Long?,
    override val connectionId: Long,
    override val serverConnectionId: Long?,
    override val address: ServerAddress,
    override val serviceId: ObjectId? = null,
    override val timestampMillis: Long = System.currentTimeMillis(),
) : CommandEvent
