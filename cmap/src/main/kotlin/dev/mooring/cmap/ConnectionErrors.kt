package dev.mooring.cmap

import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress

/**
 * A command that could not be encoded: a document larger than maxBsonObjectSize, a message
 * larger than maxMessageSizeBytes, or a name with a NUL byte. Nothing was written, so the
 * connection is still usable. Immutable.
 */
public class MongoMessageEncodingException(message: String, cause: Throwable? = null) : MooringException(message, cause)

/**
 * A server whose wire version range does not overlap [ClientWireVersion]'s; the message is the
 * SDAM spec's compatibility error. Raised by the handshake (the connection is closed; [generation]
 * is the pool's) and by server selection when the topology holds such a server (no connection;
 * [generation] is null). Immutable.
 */
public class MongoIncompatibleServerException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
) : MongoServerException(message, address, generation, handshakeCompleted = false)

/**
 * The handshake reply broke a rule of the handshake or load-balancer specs (for example a
 * load-balanced handshake without `serviceId`). The connection is closed. Immutable.
 */
public class MongoHandshakeException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
) : MongoServerException(message, address, generation, handshakeCompleted = false) {
    public companion object {
        /**
         * The message load-balancers.md requires, verbatim, when a load-balanced handshake's reply
         * has no `serviceId` (Mooring appends the server and the cause after it).
         */
        public const val LOAD_BALANCING_NOT_SUPPORTED: String =
            "Driver attempted to initialize in load balancing mode, but the server does not support this mode."
    }
}
