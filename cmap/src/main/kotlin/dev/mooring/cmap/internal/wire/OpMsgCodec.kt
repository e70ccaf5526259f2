package dev.mooring.cmap.internal.wire

import org.bson.BsonBinaryWriter
import org.bson.io.BasicOutputBuffer
import java.util.zip.CRC32C

/** Encodes and decodes OP_MSG (OP_MSG.md). Stateless; thread-safe. */
internal object OpMsgCodec {
    /**
     * Encodes [msg]. When [OpMsg.checksumPresent] is set, a CRC-32C of everything before it is
     * appended. Fails with [WireFormatException] before returning any bytes if a sequence document
     * exceeds maxBsonObjectSize, the body exceeds it by more than [MessageLimits.COMMAND_OVERHEAD],
     * or the whole message exceeds maxMessageSizeBytes.
     */
    internal fun encode(msg: OpMsg, limits: MessageLimits = MessageLimits.DEFAULT): ByteArray {
        val out = BasicOutputBuffer(INITIAL_BUFFER_SIZE)
        encodeInto(msg, limits, out)
        return out.toByteArray()
    }

    /**
     * Encodes [msg] like [encode], into [out] from its current position (callers reuse one
     * buffer, truncated to 0, per connection). The message is `out.internalBuffer[start until
     * out.position]`. On failure the buffer's content is unspecified. [writer], when given, is a
     * `BsonBinaryWriter` over [out] reused for the documents of every message encoded into [out]
     * (one allocation per connection instead of one per document); after a failure the caller
     * drops it.
     */
    internal fun encodeInto(msg: OpMsg, limits: MessageLimits, out: BasicOutputBuffer, writer: BsonBinaryWriter? = null) {
        if (msg.flagBits and OpMsg.REQUIRED_MASK and OpMsg.KNOWN_REQUIRED.inv() != 0) {
            throw WireFormatException("unknown required OP_MSG flag bits ${Integer.toHexString(msg.flagBits)}")
        }
        if (msg.sequences.isNotEmpty()) {
            val ids = HashSet<String>()
            for (s in msg.sequences) {
                if (!ids.add(s.identifier)) throw WireFormatException("duplicate document sequence '${s.identifier}'")
                if (CommandBody.contains(msg.body, msg.trailer, s.identifier)) throw WireFormatException("document sequence '${s.identifier}' also present in the body")
            }
        }
        val base = out.position
        BsonWriting.writeHeader(out, msg.requestId, msg.responseTo, OpCode.OP_MSG)
        out.writeInt32(msg.flagBits)
        out.write(0)
        BsonWriting.writeBody(out, msg.body, msg.trailer, limits.maxBsonObjectSize + MessageLimits.COMMAND_OVERHEAD, "command body", writer)
        for (s in msg.sequences) {
            out.write(1)
            val sizeAt = out.position
            out.writeInt32(0)
            BsonWriting.writeCString(out, s.identifier, "document sequence identifier")
            for (d in s.documents) {
                BsonWriting.writeDocument(out, d, limits.maxBsonObjectSize, "document in sequence '${s.identifier}'", writer)
                if (out.position - base > limits.maxMessageSizeBytes) {
                    throw WireFormatException("message is larger than maxMessageSizeBytes ${limits.maxMessageSizeBytes}")
                }
            }
            out.writeInt32(sizeAt, out.position - sizeAt)
        }
        if (!msg.checksumPresent) {
            BsonWriting.finish(out, base, limits.maxMessageSizeBytes)
            return
        }
        val total = out.position - base + 4
        if (total > limits.maxMessageSizeBytes) {
            throw WireFormatException("message is $total bytes, larger than maxMessageSizeBytes ${limits.maxMessageSizeBytes}")
        }
        out.writeInt32(base, total)
        val crc = CRC32C()
        crc.update(out.internalBuffer, base, total - 4)
        out.writeInt32(crc.value.toInt())
    }

    /**
     * [encodeInto] for a request without document sequences ([requestId], responseTo 0,
     * [flagBits], [body] with [trailer]), without an [OpMsg] object. Same checks and errors.
     */
    internal fun encodeRequestInto(requestId: Int, flagBits: Int, body: org.bson.BsonDocument, trailer: BodyTrailer?, limits: MessageLimits, out: BasicOutputBuffer) {
        if (flagBits and OpMsg.REQUIRED_MASK and OpMsg.KNOWN_REQUIRED.inv() != 0) {
            throw WireFormatException("unknown required OP_MSG flag bits ${Integer.toHexString(flagBits)}")
        }
        if (flagBits and OpMsg.CHECKSUM_PRESENT != 0) return encodeInto(OpMsg(requestId, 0, flagBits, body, trailer = trailer), limits, out)
        val base = out.position
        BsonWriting.writeHeader(out, requestId, 0, OpCode.OP_MSG)
        out.writeInt32(flagBits)
        out.write(0)
        BsonWriting.writeBody(out, body, trailer, limits.maxBsonObjectSize + MessageLimits.COMMAND_OVERHEAD, "command body")
        BsonWriting.finish(out, base, limits.maxMessageSizeBytes)
    }

    /** Encode buffers start this small and double as needed (most commands are a few hundred bytes). */
    private const val INITIAL_BUFFER_SIZE = 256

    /**
     * Decodes the part after [header] (`body.size == header.bodyLength`). Verifies the checksum
     * when present (the header bytes are needed for that, hence [headerBytes]), rejects unknown
     * required flag bits, unknown section kinds, duplicate identifiers, and anything other than
     * exactly one kind-0 section. Throws [WireFormatException] only.
     */
    internal fun decode(header: MessageHeader, headerBytes: ByteArray, body: ByteArray): OpMsg {
        if (header.opCode != OpCode.OP_MSG) throw WireFormatException("expected OP_MSG (2013), got opCode ${header.opCode}")
        if (body.size != header.bodyLength) throw WireFormatException("body is ${body.size} bytes, header says ${header.bodyLength}")
        val r = ByteReader(body)
        val flags = r.int32("OP_MSG flagBits")
        val unknown = flags and OpMsg.REQUIRED_MASK and OpMsg.KNOWN_REQUIRED.inv()
        if (unknown != 0) throw WireFormatException("OP_MSG has unknown required flag bits 0x${Integer.toHexString(unknown)}")
        var end = body.size
        if (flags and OpMsg.CHECKSUM_PRESENT != 0) {
            if (end - 4 < 4) throw WireFormatException("OP_MSG with checksumPresent is too short for a checksum")
            end -= 4
            val expected = ByteReader(body, end).int32("checksum")
            val crc = CRC32C()
            crc.update(headerBytes, 0, MessageHeader.HEADER_LENGTH)
            crc.update(body, 0, end)
            if (crc.value.toInt() != expected) {
                throw WireFormatException(
                    "OP_MSG checksum mismatch: computed 0x${Integer.toHexString(crc.value.toInt())}, message says 0x${Integer.toHexString(expected)}",
                )
            }
        }
        var bodyDoc: org.bson.BsonDocument? = null
        var sequences: ArrayList<DocumentSequence>? = null
        var ids: HashSet<String>? = null
        while (r.position < end) {
            when (val kind = r.byte("section kind")) {
                0 -> {
                    if (bodyDoc != null) throw WireFormatException("OP_MSG has more than one kind-0 section")
                    bodyDoc = r.document("kind-0 section", end)
                }
                1 -> {
                    val start = r.position
                    val size = r.int32("kind-1 section size")
                    if (size < 5 || size > end - start) {
                        throw WireFormatException("invalid kind-1 section size $size (${end - start} bytes available)")
                    }
                    val sectionEnd = start + size
                    val id = r.cstring("document sequence identifier", sectionEnd)
                    if (!(ids ?: HashSet<String>().also { ids = it }).add(id)) throw WireFormatException("duplicate document sequence identifier '$id'")
                    val docs = ArrayList<org.bson.BsonDocument>()
                    while (r.position < sectionEnd) docs.add(r.document("document in sequence '$id'", sectionEnd))
                    (sequences ?: ArrayList<DocumentSequence>().also { sequences = it }).add(DocumentSequence(id, docs))
                }
                else -> throw WireFormatException("unknown OP_MSG section kind $kind")
            }
        }
        if (r.position != end) throw WireFormatException("OP_MSG sections overran the message")
        val doc = bodyDoc ?: throw WireFormatException("OP_MSG has no kind-0 section")
        return OpMsg(header.requestId, header.responseTo, flags, doc, sequences ?: emptyList())
    }
}
