package dev.mooring.cmap.internal.wire

/**
 * Bytes that do not form a valid message, or a message that may not be sent (too large).
 * The codec throws only this; the connection turns it into a
 * [dev.mooring.cmap.MongoProtocolException] carrying the address and generation.
 * Immutable.
 */
internal class WireFormatException(message: String, cause: Throwable? = null) : RuntimeException(message, cause)
