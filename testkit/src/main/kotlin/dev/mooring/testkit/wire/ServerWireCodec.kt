package dev.mooring.testkit.wire

import org.bson.BsonArray
import org.bson.BsonBinaryReader
import org.bson.BsonDocument
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.atomic.AtomicInteger
import java.util.zip.CRC32C

/**
 * The server side of the MongoDB wire protocol as the test kit speaks it, written independently
 * of the client's codec (so a codec bug shows up as a failing test instead of being mirrored):
 * reads OP_MSG (kind-0 and kind-1 sections, the CRC-32C checksum when flagged), OP_QUERY (the
 * legacy hello) and OP_COMPRESSED around either; writes OP_MSG and OP_REPLY, optionally inside
 * OP_COMPRESSED. Stateless apart from the request-id counter; thread-safe.
 */
internal object ServerWireCodec {
    const val HEADER_LENGTH: Int = 16
    const val MAX_MESSAGE_LENGTH: Int = 48_000_000

    const val OP_REPLY: Int = 1
    const val OP_QUERY: Int = 2004
    const val OP_COMPRESSED: Int = 2012
    const val OP_MSG: Int = 2013

    const val CHECKSUM_PRESENT: Int = 1
    const val MORE_TO_COME: Int = 1 shl 1
    const val EXHAUST_ALLOWED: Int = 1 shl 16

    /** OP_REPLY responseFlags bit 3: the server supports tailable awaitData (as mongod sets it). */
    const val AWAIT_CAPABLE: Int = 8

    private val requestIds = AtomicInteger()

    /** A fresh request id for a message the server sends. */
    fun nextRequestId(): Int = requestIds.incrementAndGet()

    /** The total message length a [header] (its first 16 bytes) announces, validated. */
    fun messageLength(header: ByteArray): Int {
        val length = le(header).getInt(0)
        if (length < HEADER_LENGTH || length > MAX_MESSAGE_LENGTH) {
            throw WireProtocolException("message length $length outside $HEADER_LENGTH..$MAX_MESSAGE_LENGTH")
        }
        return length
    }

    /** Decodes one whole message (header and body). */
    fun decode(message: ByteArray): ClientMessage =
        if (le(message).getInt(12) == OP_COMPRESSED) decompress(message) else decodePlain(message, null)

    private fun decompress(message: ByteArray): ClientMessage {
        val b = le(message)
        val requestId = b.getInt(4)
        if (message.size < HEADER_LENGTH + 9) throw WireProtocolException("OP_COMPRESSED too short: ${message.size} bytes")
        val originalOpCode = b.getInt(HEADER_LENGTH)
        val uncompressedSize = b.getInt(HEADER_LENGTH + 4)
        val id = message[HEADER_LENGTH + 8].toInt() and 0xff
        if (uncompressedSize < 0 || uncompressedSize > MAX_MESSAGE_LENGTH - HEADER_LENGTH) {
            throw WireProtocolException("OP_COMPRESSED announces $uncompressedSize uncompressed bytes")
        }
        val compressed = message.copyOfRange(HEADER_LENGTH + 9, message.size)
        val body = when (id) {
            0 -> compressed
            else -> {
                val compressor = WireCompressor.byId(id) ?: throw WireProtocolException("unknown compressor id $id")
                try {
                    compressor.decompress(compressed, uncompressedSize)
                } catch (e: WireProtocolException) {
                    throw e
                } catch (e: Exception) {
                    throw WireProtocolException("${compressor.wireName} data does not decompress: ${e.message}", e)
                }
            }
        }
        if (body.size != uncompressedSize) throw WireProtocolException("OP_COMPRESSED body is ${body.size} bytes, announced $uncompressedSize")
        // the inner message as the client would have sent it uncompressed: the checksum covers that
        val inner = ByteArray(HEADER_LENGTH + body.size)
        le(inner).putInt(0, inner.size).putInt(4, requestId).putInt(8, b.getInt(8)).putInt(12, originalOpCode)
        body.copyInto(inner, HEADER_LENGTH)
        return decodePlain(inner, id)
    }

    /** Decodes an uncompressed [whole] message that arrived compressed with [compressorId] (null: uncompressed). */
    private fun decodePlain(whole: ByteArray, compressorId: Int?): ClientMessage {
        val requestId = le(whole).getInt(4)
        return when (val opCode = le(whole).getInt(12)) {
            OP_MSG -> decodeMsg(requestId, compressorId, whole)
            OP_QUERY -> decodeQuery(requestId, compressorId, whole)
            else -> ClientMessage.Unsupported(requestId, compressorId, opCode)
        }
    }

    private fun decodeMsg(requestId: Int, compressorId: Int?, whole: ByteArray): ClientMessage.Msg {
        val b = le(whole)
        if (whole.size < HEADER_LENGTH + 4) throw WireProtocolException("OP_MSG too short: ${whole.size} bytes")
        val flags = b.getInt(HEADER_LENGTH)
        val undefinedRequired = flags and 0xffff and (CHECKSUM_PRESENT or MORE_TO_COME).inv()
        if (undefinedRequired != 0) throw WireProtocolException("OP_MSG sets unknown required flag bits 0x${Integer.toHexString(undefinedRequired)}")
        var end = whole.size
        if (flags and CHECKSUM_PRESENT != 0) {
            end -= 4
            if (end < HEADER_LENGTH + 4) throw WireProtocolException("OP_MSG flags a checksum it has no room for")
            val crc = CRC32C().apply { update(whole, 0, end) }.value.toInt()
            val sent = b.getInt(end)
            if (crc != sent) throw WireProtocolException("OP_MSG checksum 0x${Integer.toHexString(sent)} does not match the computed 0x${Integer.toHexString(crc)}")
        }
        var pos = HEADER_LENGTH + 4
        var body: BsonDocument? = null
        val sequences = ArrayList<Pair<String, BsonArray>>()
        while (pos < end) {
            when (val kind = whole[pos++].toInt()) {
                0 -> {
                    if (body != null) throw WireProtocolException("OP_MSG with two kind-0 sections")
                    val size = documentSize(whole, pos, end)
                    body = document(whole, pos, size)
                    pos += size
                }
                1 -> {
                    if (end - pos < 4) throw WireProtocolException("OP_MSG kind-1 section without a size")
                    val size = b.getInt(pos)
                    val sectionEnd = pos + size
                    if (size < 5 || sectionEnd > end) throw WireProtocolException("OP_MSG kind-1 section size $size out of bounds")
                    var p = pos + 4
                    val nul = (p until sectionEnd).firstOrNull { whole[it].toInt() == 0 } ?: throw WireProtocolException("OP_MSG kind-1 identifier not terminated")
                    val identifier = String(whole, p, nul - p, Charsets.UTF_8)
                    p = nul + 1
                    val docs = BsonArray()
                    while (p < sectionEnd) {
                        val docSize = documentSize(whole, p, sectionEnd)
                        docs.add(document(whole, p, docSize))
                        p += docSize
                    }
                    sequences += identifier to docs
                    pos = sectionEnd
                }
                else -> throw WireProtocolException("OP_MSG section kind $kind")
            }
        }
        val command = body ?: throw WireProtocolException("OP_MSG without a kind-0 section")
        for ((identifier, docs) in sequences) {
            if (command.containsKey(identifier)) throw WireProtocolException("OP_MSG sends '$identifier' both in the body and as a document sequence")
            command[identifier] = docs
        }
        return ClientMessage.Msg(requestId, compressorId, flags, command)
    }

    private fun decodeQuery(requestId: Int, compressorId: Int?, bytes: ByteArray): ClientMessage.Query {
        var pos = HEADER_LENGTH + 4 // flags
        val nul = (pos until bytes.size).firstOrNull { bytes[it].toInt() == 0 } ?: throw WireProtocolException("OP_QUERY collection name not terminated")
        val collection = String(bytes, pos, nul - pos, Charsets.UTF_8)
        pos = nul + 1 + 8 // numberToSkip, numberToReturn
        val size = documentSize(bytes, pos, bytes.size)
        return ClientMessage.Query(requestId, compressorId, collection, document(bytes, pos, size))
    }

    private fun documentSize(bytes: ByteArray, pos: Int, limit: Int): Int {
        if (limit - pos < 5) throw WireProtocolException("a BSON document needs at least 5 bytes, ${limit - pos} left")
        val size = le(bytes).getInt(pos)
        if (size < 5 || size > limit - pos) throw WireProtocolException("BSON document size $size out of bounds (${limit - pos} bytes left)")
        return size
    }

    private fun document(bytes: ByteArray, pos: Int, size: Int): BsonDocument =
        try {
            BsonBinaryReader(ByteBuffer.wrap(bytes, pos, size).slice().order(ByteOrder.LITTLE_ENDIAN)).use { reader ->
                BsonDocumentCodec().decode(reader, DecoderContext.builder().build())
            }
        } catch (e: org.bson.BSONException) {
            throw WireProtocolException("malformed BSON document: ${e.message}", e)
        }

    /** An OP_MSG with one kind-0 section holding [document]. */
    fun encodeMsg(requestId: Int, responseTo: Int, flagBits: Int, document: BsonDocument): ByteArray {
        val doc = bsonBytes(document)
        val out = ByteArray(HEADER_LENGTH + 4 + 1 + doc.size)
        header(out, requestId, responseTo, OP_MSG).putInt(HEADER_LENGTH, flagBits)
        out[HEADER_LENGTH + 4] = 0
        doc.copyInto(out, HEADER_LENGTH + 5)
        return out
    }

    /** An OP_REPLY carrying [documents] (cursor id 0, starting at 0). */
    fun encodeReply(requestId: Int, responseTo: Int, responseFlags: Int, documents: List<BsonDocument>): ByteArray {
        val docs = documents.map(::bsonBytes)
        val out = ByteArray(HEADER_LENGTH + 20 + docs.sumOf { it.size })
        header(out, requestId, responseTo, OP_REPLY)
            .putInt(HEADER_LENGTH, responseFlags).putLong(HEADER_LENGTH + 4, 0L).putInt(HEADER_LENGTH + 12, 0).putInt(HEADER_LENGTH + 16, docs.size)
        var pos = HEADER_LENGTH + 20
        for (d in docs) { d.copyInto(out, pos); pos += d.size }
        return out
    }

    /** [message] (a whole uncompressed message) wrapped in OP_COMPRESSED with [compressor]. */
    fun compress(message: ByteArray, compressor: WireCompressor): ByteArray {
        val src = le(message)
        val body = message.copyOfRange(HEADER_LENGTH, message.size)
        val compressed = compressor.compress(body)
        val out = ByteArray(HEADER_LENGTH + 9 + compressed.size)
        header(out, src.getInt(4), src.getInt(8), OP_COMPRESSED).putInt(HEADER_LENGTH, src.getInt(12)).putInt(HEADER_LENGTH + 4, body.size)
        out[HEADER_LENGTH + 8] = compressor.id.toByte()
        compressed.copyInto(out, HEADER_LENGTH + 9)
        return out
    }

    private fun header(out: ByteArray, requestId: Int, responseTo: Int, opCode: Int): ByteBuffer =
        le(out).putInt(0, out.size).putInt(4, requestId).putInt(8, responseTo).putInt(12, opCode)

    private fun bsonBytes(document: BsonDocument): ByteArray {
        val buffer = RawBsonDocument(document, BsonDocumentCodec()).byteBuffer
        return ByteArray(buffer.remaining()).also { buffer.get(it) }
    }

    private fun le(bytes: ByteArray): ByteBuffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
}
