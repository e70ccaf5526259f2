package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.internal.wire.BodyTrailer
import dev.mooring.cmap.internal.wire.CommandBody
import dev.mooring.cmap.internal.wire.MessageLimits
import dev.mooring.cmap.internal.wire.OpCompressed
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.compression.Compressor
import org.bson.BsonDocument
import org.bson.io.BasicOutputBuffer

/**
 * The buffers one connection encodes its requests into, the connection's one encode path. A
 * message of usual size is encoded into the kept [sendBuffer] (and, compressed, wrapped into the
 * kept [compressBuffer]); a larger one (a command carrying large encoded documents, or many small
 * ones) into a buffer of [pool] of about its size at once, not a chain of doubling ones, given
 * back once written ([written]). Not thread-safe: guarded by the connection's single-track flag.
 */
internal class MessageBuffers(
    /** Where the buffers of large messages come from and go back to (the factory's, shared by its connections); null: new ones, dropped. */
    private val pool: SendBufferPool?,
) {
    /** The encode buffer reused by every command of usual size. */
    private var sendBuffer: BasicOutputBuffer? = null

    /** The OP_COMPRESSED buffer reused by every compressed message of usual size. */
    private var compressBuffer: BasicOutputBuffer? = null

    /** The buffer holding the message [prepare] encoded, until it is written. */
    var outgoing: BasicOutputBuffer? = null
        private set

    /**
     * Encodes the request OP_MSG ([requestId], [flagBits], [body] with [trailer], no sequences)
     * into [outgoing]; returns its length. When [compressor] is given and OP_COMPRESSED.md allows
     * compressing this command, the message is wrapped (never larger than maxMessageSizeBytes:
     * incompressible data that would grow past it is sent uncompressed). Encoding errors are
     * [dev.mooring.cmap.internal.wire.WireFormatException]s.
     */
    fun prepare(requestId: Int, flagBits: Int, body: BsonDocument, trailer: BodyTrailer?, limits: MessageLimits, compressor: Compressor?): Int {
        val carried = CommandBody.carriedBytes(body, limits.maxMessageSizeBytes)
        val out = if (carried > MAX_KEPT_SEND_BUFFER) takeLarge(carried + LARGE_MESSAGE_ROOM) else sendBuffer ?: BasicOutputBuffer(SEND_BUFFER_SIZE).also { sendBuffer = it }
        out.truncateToPosition(0)
        outgoing = out
        try {
            OpMsgCodec.encodeRequestInto(requestId, flagBits, body, trailer, limits, out)
        } finally {
            // the kept buffer grew past the size kept (also by a message that then failed, too large):
            // it is a large one now, not kept; given to the pool once written
            if (out === sendBuffer && out.internalBuffer.size > MAX_KEPT_SEND_BUFFER) sendBuffer = null
        }
        val c = compressor ?: return out.position
        if (!OpCompressed.mayCompress(CommandBody.firstKey(body, trailer))) return out.position
        val bound = OpCompressed.maxWrappedLength(out.position, c)
        val dest = if (bound > MAX_KEPT_SEND_BUFFER) {
            takeLarge(bound)
        } else {
            compressBuffer?.takeIf { it.internalBuffer.size >= bound } ?: BasicOutputBuffer(maxOf(bound, SEND_BUFFER_SIZE)).also { compressBuffer = it }
        }
        val wrapped = OpCompressed.wrapInto(out.internalBuffer, out.position, c, dest.internalBuffer)
        if (wrapped > limits.maxMessageSizeBytes) {
            release(dest) // the message goes uncompressed
            return out.position
        }
        release(out)
        outgoing = dest
        return wrapped
    }

    /** True when [buffer] is one this connection keeps (written, it stays here). */
    fun isKept(buffer: BasicOutputBuffer): Boolean = buffer === sendBuffer || buffer === compressBuffer

    /** [buffer], a large one, is about to be written: it is no longer [outgoing] (a failed write drops it: the socket may still hold it). */
    fun writing(buffer: BasicOutputBuffer) {
        if (outgoing === buffer) outgoing = null
    }

    /** [buffer], a large one, was written: back to the pool. */
    fun written(buffer: BasicOutputBuffer) {
        pool?.give(buffer)
    }

    private fun takeLarge(capacity: Int): BasicOutputBuffer = pool?.take(capacity) ?: BasicOutputBuffer(capacity)

    private fun release(buffer: BasicOutputBuffer) {
        if (!isKept(buffer)) pool?.give(buffer)
    }

    private companion object {
        /** The reusable encode buffer starts this large and grows as needed. */
        const val SEND_BUFFER_SIZE = 512

        /** A buffer grown past this (by an unusually large message) is not kept by the connection (it goes to [SendBufferPool]). */
        const val MAX_KEPT_SEND_BUFFER = 64 * 1024

        /** Room for a large message's header and command fields besides the documents it carries. */
        const val LARGE_MESSAGE_ROOM = 16 * 1024
    }
}
