package dev.mooring.sdam

import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress

/** A cursor failed for a reason of its own (not a server error): see the subtypes. Thread-safe, immutable apart from error labels. */
public sealed class MongoCursorException(message: String, cause: Throwable? = null) : MooringException(message, cause) {
    /** The server the cursor lives on. */
    public abstract val address: ServerAddress
}

/** The command [commandName] sent to [runCursorCommand][MongoCluster.runCursorCommand] answered `ok: 1` without a `cursor` document. */
public class MongoMissingCursorException(
    /** The command's name (its first key). */
    public val commandName: String,
    override val address: ServerAddress,
) : MongoCursorException("command '$commandName' returned no cursor document (from $address); runCursorCommand needs a cursor-returning command")

/**
 * A cursor reply that breaks the protocol: a getMore answered with another cursor id or namespace,
 * or a `cursor` document without a valid `id`, `ns` or batch array. The cursor is not used further.
 */
public class MongoCursorProtocolException(message: String, override val address: ServerAddress) : MongoCursorException(message)

/**
 * The server a cursor lives on is no longer part of the topology (or its pool is closed), so its
 * next getMore cannot be sent; the server kills the cursor on its own after its idle timeout.
 */
public class MongoCursorServerUnavailableException(override val address: ServerAddress, cause: Throwable? = null) :
    MongoCursorException("the cursor's server $address is no longer available", cause)

/** An explicit session was used on a server that does not support sessions (no `logicalSessionTimeoutMinutes`). */
public class MongoSessionNotSupportedException(public val address: ServerAddress) :
    MooringException("$address does not support sessions; an explicit session cannot be used with it")
