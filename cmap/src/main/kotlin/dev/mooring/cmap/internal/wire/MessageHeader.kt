package dev.mooring.cmap.internal.wire

/**
 * The 16-byte standard message header. Immutable.
 *
 * @property messageLength total length of the message including this header.
 */
internal data class MessageHeader(
    val messageLength: Int,
    val requestId: Int,
    val responseTo: Int,
    val opCode: Int,
) {
    /** Length of the part after the header. */
    internal val bodyLength: Int get() = messageLength - HEADER_LENGTH

    internal companion object {
        /** Size of the header in bytes. */
        internal const val HEADER_LENGTH: Int = 16

        /**
         * Parses the first 16 bytes of [bytes] and validates messageLength against
         * 16..[maxMessageSizeBytes] before anything else is allocated. Throws [WireFormatException].
         */
        internal fun parse(bytes: ByteArray, maxMessageSizeBytes: Int): MessageHeader {
            if (bytes.size < HEADER_LENGTH) throw WireFormatException("message header needs 16 bytes, got ${bytes.size}")
            val h = MessageHeader(int32At(bytes, 0), int32At(bytes, 4), int32At(bytes, 8), int32At(bytes, 12))
            if (h.messageLength < HEADER_LENGTH) {
                throw WireFormatException("invalid messageLength ${h.messageLength}: less than the 16-byte header")
            }
            if (h.messageLength > maxMessageSizeBytes) {
                throw WireFormatException(
                    "invalid messageLength ${h.messageLength}: larger than maxMessageSizeBytes $maxMessageSizeBytes",
                )
            }
            return h
        }
    }
}
