package dev.mooring.testkit.wire

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.zip.CRC32C

/** The test kit's server-side codec against messages laid out by hand from OP_MSG.md / OP_COMPRESSED.md. */
class ServerWireCodecSpec : FunSpec({
    fun int32(out: ByteArrayOutputStream, v: Int) = out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array())
    fun bson(d: BsonDocument): ByteArray = RawBsonDocument(d, BsonDocumentCodec()).let { r -> ByteArray(r.byteBuffer.remaining()).also { r.byteBuffer.get(it) } }

    /** An OP_MSG from request 7 with a kind-0 [body], one kind-1 sequence `documents` and, when [checksum], a CRC-32C. */
    fun opMsg(body: BsonDocument, sequence: List<BsonDocument>, flags: Int, checksum: Boolean): ByteArray {
        val sections = ByteArrayOutputStream()
        sections.write(0)
        sections.write(bson(body))
        sections.write(1)
        val seq = ByteArrayOutputStream().apply { write("documents".toByteArray()); write(0); sequence.forEach { write(bson(it)) } }.toByteArray()
        int32(sections, seq.size + 4)
        sections.write(seq)
        val allFlags = flags or (if (checksum) ServerWireCodec.CHECKSUM_PRESENT else 0)
        val out = ByteArrayOutputStream()
        val length = 16 + 4 + sections.size() + (if (checksum) 4 else 0)
        int32(out, length); int32(out, 7); int32(out, 0); int32(out, ServerWireCodec.OP_MSG); int32(out, allFlags)
        out.write(sections.toByteArray())
        if (checksum) int32(out, CRC32C().apply { update(out.toByteArray()) }.value.toInt())
        return out.toByteArray()
    }

    val body = BsonDocument("insert", BsonString("c")).append("\$db", BsonString("test"))
    val docs = listOf(BsonDocument("_id", BsonInt32(1)), BsonDocument("_id", BsonInt32(2)))

    test("an OP_MSG's kind-1 sequence joins the body as an array; flags and database are read") {
        val m = ServerWireCodec.decode(opMsg(body, docs, ServerWireCodec.EXHAUST_ALLOWED, checksum = true))
        m.shouldBeInstanceOf<ClientMessage.Msg>()
        m.requestId shouldBe 7
        m.database shouldBe "test"
        m.exhaustAllowed shouldBe true
        m.moreToCome shouldBe false
        m.command["documents"] shouldBe BsonArray(docs)
    }

    test("a checksum that does not match the message is rejected") {
        val bytes = opMsg(body, docs, 0, checksum = true)
        bytes[bytes.size - 1] = (bytes[bytes.size - 1] + 1).toByte()
        shouldThrow<WireProtocolException> { ServerWireCodec.decode(bytes) }
    }

    test("a length outside 16..48000000 is rejected before the body is read") {
        val header = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 15).array()
        shouldThrow<WireProtocolException> { ServerWireCodec.messageLength(header) }
    }

    WireCompressor.entries.forEach { compressor ->
        test("OP_COMPRESSED with ${compressor.wireName} carries the original message both ways") {
            val plain = opMsg(body, docs, 0, checksum = true)
            val compressed = ServerWireCodec.compress(plain, compressor)
            ByteBuffer.wrap(compressed).order(ByteOrder.LITTLE_ENDIAN).getInt(12) shouldBe ServerWireCodec.OP_COMPRESSED
            val m = ServerWireCodec.decode(compressed)
            m.compressorId shouldBe compressor.id
            m.command["documents"] shouldBe BsonArray(docs)
        }
    }

    test("an OP_REPLY lays out flags, cursor id, starting point and its documents") {
        val reply = ServerWireCodec.encodeReply(9, 7, ServerWireCodec.AWAIT_CAPABLE, listOf(body))
        val b = ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN)
        listOf(b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12), b.getInt(16)) shouldBe listOf(reply.size, 9, 7, ServerWireCodec.OP_REPLY, 8)
        b.getLong(20) shouldBe 0L
        b.getInt(32) shouldBe 1
        RawBsonDocument(reply.copyOfRange(36, reply.size)) shouldBe body
    }
})
