package dev.mooring.cmap.internal.wire

import dev.mooring.cmap.internal.wire.compression.Compressor
import dev.mooring.cmap.internal.wire.compression.Compressors
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Wraps and unwraps OP_COMPRESSED (OP_COMPRESSED.md). Stateless; thread-safe.
 */
internal object OpCompressed {
    /** originalOpcode + uncompressedSize + compressorId. */
    private const val PREFIX_LENGTH = 9

    /**
     * The commands whose messages must never be compressed (OP_COMPRESSED.md, "Messages not
     * allowed to be compressed"), compared case-sensitively as the server does, plus `ismaster`.
     */
    internal val UNCOMPRESSIBLE_COMMANDS: Set<String> = setOf(
        "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "getnonce", "authenticate",
        "createUser", "updateUser", "copydbSaslStart", "copydbgetnonce", "copydb",
    )

    /** True when a command named [commandName] may be sent compressed. */
    internal fun mayCompress(commandName: String): Boolean = commandName !in UNCOMPRESSIBLE_COMMANDS

    /**
     * Wraps the complete encoded message [message] (header included) with [compressor]. The
     * result keeps the message's requestID and responseTo.
     */
    internal fun wrap(message: ByteArray, compressor: Compressor): ByteArray {
        val out = ByteArray(maxWrappedLength(message.size, compressor))
        return out.copyOf(wrapInto(message, message.size, compressor, out))
    }

    /** The most bytes [wrapInto] writes for a message of [messageLength] bytes. */
    internal fun maxWrappedLength(messageLength: Int, compressor: Compressor): Int =
        MessageHeader.HEADER_LENGTH + PREFIX_LENGTH + compressor.maxCompressedLength(maxOf(0, messageLength - MessageHeader.HEADER_LENGTH))

    /**
     * Wraps the encoded message in [message]'s first [length] bytes (header included) with
     * [compressor] into [dest] from 0 ([dest] has room for [maxWrappedLength]); returns the
     * wrapped message's length. It keeps the message's requestID and responseTo. Nothing is
     * copied but into [dest].
     */
    internal fun wrapInto(message: ByteArray, length: Int, compressor: Compressor, dest: ByteArray): Int {
        if (length < MessageHeader.HEADER_LENGTH) throw WireFormatException("message to compress has no header")
        val header = ByteBuffer.wrap(message, 0, MessageHeader.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
        header.int
        val requestId = header.int
        val responseTo = header.int
        val opCode = header.int
        val bodyLength = length - MessageHeader.HEADER_LENGTH
        val start = MessageHeader.HEADER_LENGTH + PREFIX_LENGTH
        val compressed = compressor.compressInto(message, MessageHeader.HEADER_LENGTH, bodyLength, dest, start)
        val total = start + compressed
        val out = ByteBuffer.wrap(dest, 0, start).order(ByteOrder.LITTLE_ENDIAN)
        out.putInt(total).putInt(requestId).putInt(responseTo).putInt(OpCode.OP_COMPRESSED)
        out.putInt(opCode).putInt(bodyLength).put(compressor.id.toByte())
        return total
    }

    /** A message after unwrapping: the header it would have had uncompressed, its bytes, and the body. */
    internal class Unwrapped(internal val header: MessageHeader, internal val headerBytes: ByteArray, internal val body: ByteArray)

    /**
     * Unwraps the body of an OP_COMPRESSED message with [header]. Throws [WireFormatException]
     * for an unknown compressorId, a nested OP_COMPRESSED, an uncompressedSize that is negative or
     * over [maxMessageSizeBytes], or data that does not decompress to exactly uncompressedSize bytes.
     */
    internal fun unwrap(header: MessageHeader, body: ByteArray, maxMessageSizeBytes: Int): Unwrapped {
        if (header.opCode != OpCode.OP_COMPRESSED) throw WireFormatException("expected OP_COMPRESSED (2012), got opCode ${header.opCode}")
        if (body.size < PREFIX_LENGTH) throw WireFormatException("OP_COMPRESSED body is ${body.size} bytes, too short")
        val b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN)
        val originalOpcode = b.int
        val uncompressedSize = b.int
        val compressorId = b.get().toInt() and 0xff
        if (originalOpcode == OpCode.OP_COMPRESSED) throw WireFormatException("OP_COMPRESSED wraps another OP_COMPRESSED")
        if (uncompressedSize < 0 || uncompressedSize > maxMessageSizeBytes - MessageHeader.HEADER_LENGTH) {
            throw WireFormatException("OP_COMPRESSED has invalid uncompressedSize $uncompressedSize")
        }
        val compressor = Compressors.byId(compressorId)
            ?: throw WireFormatException("OP_COMPRESSED uses unknown compressorId $compressorId")
        val inner = try {
            compressor.decompress(body.copyOfRange(PREFIX_LENGTH, body.size), uncompressedSize)
        } catch (e: WireFormatException) {
            throw WireFormatException("invalid OP_COMPRESSED (${compressor.name}): ${e.message}", e)
        }
        val innerHeader = MessageHeader(uncompressedSize + MessageHeader.HEADER_LENGTH, header.requestId, header.responseTo, originalOpcode)
        val hb = ByteBuffer.allocate(MessageHeader.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(innerHeader.messageLength).putInt(innerHeader.requestId).putInt(innerHeader.responseTo).putInt(originalOpcode)
        return Unwrapped(innerHeader, hb.array(), inner)
    }
}
