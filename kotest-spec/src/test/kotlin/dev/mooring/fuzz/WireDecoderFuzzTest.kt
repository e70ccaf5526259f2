package dev.mooring.fuzz

import com.code_intelligence.jazzer.junit.FuzzTest
import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpCompressed
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.OpReply
import dev.mooring.cmap.internal.wire.WireFormatException

/**
 * Fuzz targets for the wire decoder: whatever bytes a server sends, decoding ends in a value or
 * a [WireFormatException] (which the connection maps to MongoProtocolException) — never another
 * exception, a hang, or an allocation larger than the message limit.
 *
 * Regression mode (the normal test command) replays the inputs under
 * src/test/resources/dev/mooring/fuzz/WireDecoderFuzzTestInputs/<method>/; `JAZZER_FUZZ=1`
 * fuzzes (see docs/fuzzing.md).
 */
class WireDecoderFuzzTest {
    /** A whole message as read from a socket: header first, then exactly the body it announces. */
    @FuzzTest(maxDuration = "60s")
    fun anyMessage(data: ByteArray) {
        decodeReply(data)
    }

    /** An OP_MSG body behind a valid header (the fuzzer spends its effort on sections and BSON). */
    @FuzzTest(maxDuration = "60s")
    fun opMsg(body: ByteArray) {
        decodeReply(frame(OpCode.OP_MSG, body))
    }

    /** An OP_REPLY body behind a valid header (legacy hello replies). */
    @FuzzTest(maxDuration = "60s")
    fun opReply(body: ByteArray) {
        decodeReply(frame(OpCode.OP_REPLY, body))
    }

    /**
     * An OP_COMPRESSED message: the prefix (original opcode, uncompressed size, compressor id),
     * the decompressors (snappy, zlib, zstd) and then the wrapped OP_MSG, as the connection
     * decodes a compressed reply.
     */
    @FuzzTest(maxDuration = "60s")
    fun opCompressed(body: ByteArray) {
        decodeReply(frame(OpCode.OP_COMPRESSED, body))
    }
}

/** The largest message the fuzz targets accept: small, so an allocation bug shows at once. */
internal const val FUZZ_MAX_MESSAGE_SIZE = 64 * 1024

/** A 16-byte header announcing [body] with [opCode], followed by [body]. */
internal fun frame(opCode: Int, body: ByteArray): ByteArray {
    val out = ByteArray(MessageHeader.HEADER_LENGTH + body.size)
    fun putInt(at: Int, v: Int) {
        out[at] = v.toByte(); out[at + 1] = (v shr 8).toByte(); out[at + 2] = (v shr 16).toByte(); out[at + 3] = (v shr 24).toByte()
    }
    putInt(0, out.size)
    putInt(4, 7)
    putInt(8, 1)
    putInt(12, opCode)
    body.copyInto(out, MessageHeader.HEADER_LENGTH)
    return out
}

/**
 * Decodes [bytes] the way a connection decodes a reply: the header is validated against the
 * size limit before the body is taken; then the opcode picks the decoder. Returns normally for
 * a decoded message or a [WireFormatException]; any other throwable escapes (a finding).
 * A stream that ends before the announced length is the socket's EOF (a network error), not
 * the decoder's business, so it is ignored.
 */
internal fun decodeReply(bytes: ByteArray) {
    if (bytes.size < MessageHeader.HEADER_LENGTH) return
    try {
        val headerBytes = bytes.copyOfRange(0, MessageHeader.HEADER_LENGTH)
        val header = MessageHeader.parse(headerBytes, FUZZ_MAX_MESSAGE_SIZE)
        check(header.bodyLength in 0..FUZZ_MAX_MESSAGE_SIZE) { "header accepted a body of ${header.bodyLength} bytes" }
        if (bytes.size - MessageHeader.HEADER_LENGTH < header.bodyLength) return
        val body = bytes.copyOfRange(MessageHeader.HEADER_LENGTH, MessageHeader.HEADER_LENGTH + header.bodyLength)
        when (header.opCode) {
            OpCode.OP_MSG -> OpMsgCodec.decode(header, headerBytes, body)
            OpCode.OP_REPLY -> OpReply.decode(header, body)
            OpCode.OP_COMPRESSED -> {
                val inner = OpCompressed.unwrap(header, body, FUZZ_MAX_MESSAGE_SIZE)
                if (inner.header.opCode != OpCode.OP_MSG) throw WireFormatException("OP_COMPRESSED wraps opCode ${inner.header.opCode}")
                OpMsgCodec.decode(inner.header, inner.headerBytes, inner.body)
            }
            else -> throw WireFormatException("unexpected opCode ${header.opCode} in a reply")
        }
    } catch (_: WireFormatException) {
        // the typed error: fine
    }
}
