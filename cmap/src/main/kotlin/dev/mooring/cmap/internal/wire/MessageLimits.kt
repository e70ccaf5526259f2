package dev.mooring.cmap.internal.wire

import dev.mooring.cmap.ConnectionDescription

/**
 * Size limits applied by the codec. Immutable.
 *
 * @property maxBsonObjectSize the largest document a user may send (documents in a kind-1
 *   sequence); a command body may exceed it by [COMMAND_OVERHEAD] bytes, as on the server.
 * @property maxMessageSizeBytes the largest message in either direction.
 */
internal data class MessageLimits(
    val maxBsonObjectSize: Int = ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
    val maxMessageSizeBytes: Int = ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
) {
    init {
        require(maxBsonObjectSize > 0) { "maxBsonObjectSize must be positive, was $maxBsonObjectSize" }
        require(maxMessageSizeBytes >= MessageHeader.HEADER_LENGTH) { "maxMessageSizeBytes too small: $maxMessageSizeBytes" }
    }

    internal companion object {
        /** Extra room a command body gets over maxBsonObjectSize (the server's internal limit is 16 MiB + 16 KiB). */
        internal const val COMMAND_OVERHEAD: Int = 16 * 1024

        /** The limits before a handshake told us otherwise. */
        internal val DEFAULT: MessageLimits = MessageLimits()
    }
}
