package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.DocumentSequence
import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.WireFormatException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.zip.CRC32C

internal fun decodeMsg(bytes: ByteArray): OpMsg {
    val header = MessageHeader.parse(bytes, 48_000_000)
    return OpMsgCodec.decode(header, bytes.copyOfRange(0, 16), bytes.copyOfRange(16, bytes.size))
}

internal fun ByteArray.putIntLE(at: Int, v: Int) {
    ByteBuffer.wrap(this).order(ByteOrder.LITTLE_ENDIAN).putInt(at, v)
}

internal fun ByteArray.intLE(at: Int): Int = ByteBuffer.wrap(this).order(ByteOrder.LITTLE_ENDIAN).getInt(at)

class OpMsgCodecSpec : FunSpec({
    val body = BsonDocument("insert", BsonString("coll")).append("\$db", BsonString("test"))
    val docs = (1..3).map { BsonDocument("_id", BsonInt32(it)).append("x", BsonString("v$it")) }

    test("a BsonBinaryWriter reused over one buffer encodes message after message exactly as a fresh encode") {
        val out = org.bson.io.BasicOutputBuffer(64)
        val writer = org.bson.BsonBinaryWriter(out)
        val messages = listOf(
            OpMsg(1, 0, 0, BsonDocument("ping", BsonInt32(1)).append("\$db", BsonString("admin"))),
            OpMsg(2, 0, 0, BsonDocument("insert", BsonString("c")).append("\$db", BsonString("test")), listOf(DocumentSequence("documents", listOf(BsonDocument("_id", BsonInt32(1)), BsonDocument("_id", BsonInt32(2)))))),
            OpMsg(3, 0, 0, BsonDocument("find", BsonString("a-longer-collection-name")).append("filter", BsonDocument("x", BsonDocument("\$gt", BsonInt32(5)))).append("\$db", BsonString("db"))),
        )
        for (m in messages) {
            out.truncateToPosition(0)
            OpMsgCodec.encodeInto(m, dev.mooring.cmap.internal.wire.MessageLimits.DEFAULT, out, writer)
            out.toByteArray().toList() shouldBe OpMsgCodec.encode(m).toList()
        }
    }

    test("an array's keys are its indexes in decimal, as the library writes them, past one, two, three and four digits") {
        val items = org.bson.BsonArray((0 until 1_234).map { if (it % 2 == 0) BsonInt32(it) else BsonDocument("n", org.bson.BsonArray(listOf(BsonString("a"), BsonString("b")))) })
        val cmd = BsonDocument("insert", BsonString("c")).append("items", items).append("\$db", BsonString("test"))
        val bytes = OpMsgCodec.encode(OpMsg(1, 0, 0, cmd))
        val library = org.bson.io.BasicOutputBuffer()
        org.bson.codecs.BsonDocumentCodec().encode(org.bson.BsonBinaryWriter(library), cmd, org.bson.codecs.EncoderContext.builder().build())
        // header (16), flagBits (4), section kind 0 (1), then the body
        bytes.copyOfRange(21, bytes.size).toList() shouldBe library.toByteArray().toList()
    }

    test("a kind-0 body round-trips with header fields intact") {
        val bytes = OpMsgCodec.encode(OpMsg(42, 7, 0, body))
        bytes.intLE(0) shouldBe bytes.size
        bytes.intLE(4) shouldBe 42
        bytes.intLE(8) shouldBe 7
        bytes.intLE(12) shouldBe OpCode.OP_MSG
        val m = decodeMsg(bytes)
        m.requestId shouldBe 42
        m.responseTo shouldBe 7
        m.body shouldBe body
        m.sequences shouldBe emptyList()
        m.moreToCome shouldBe false
    }

    test("kind-1 document sequences round-trip and fold into the command") {
        val msg = OpMsg(1, 0, 0, body, listOf(DocumentSequence("documents", docs), DocumentSequence("other", emptyList())))
        val m = decodeMsg(OpMsgCodec.encode(msg))
        m.sequences shouldBe msg.sequences
        m.bodyWithSequences()["documents"]!!.asArray().size shouldBe 3
        m.bodyWithSequences()["insert"] shouldBe BsonString("coll")
    }

    test("moreToCome and exhaustAllowed flags round-trip") {
        val m = decodeMsg(OpMsgCodec.encode(OpMsg(1, 0, OpMsg.MORE_TO_COME or OpMsg.EXHAUST_ALLOWED, body)))
        m.moreToCome shouldBe true
        m.exhaustAllowed shouldBe true
    }

    test("a checksum is appended, verified, and equals CRC-32C of the preceding bytes") {
        val bytes = OpMsgCodec.encode(OpMsg(5, 0, OpMsg.CHECKSUM_PRESENT, body, listOf(DocumentSequence("documents", docs))))
        val crc = CRC32C().apply { update(bytes, 0, bytes.size - 4) }
        bytes.intLE(bytes.size - 4) shouldBe crc.value.toInt()
        val m = decodeMsg(bytes)
        m.checksumPresent shouldBe true
        m.sequences.single().documents shouldBe docs
    }

    test("a corrupted byte under a checksum is rejected") {
        val bytes = OpMsgCodec.encode(OpMsg(5, 0, OpMsg.CHECKSUM_PRESENT, body))
        bytes[30] = (bytes[30].toInt() xor 0x01).toByte()
        shouldThrow<WireFormatException> { decodeMsg(bytes) }.message shouldContain "checksum"
    }

    test("a corrupted header under a checksum is rejected") {
        val bytes = OpMsgCodec.encode(OpMsg(5, 0, OpMsg.CHECKSUM_PRESENT, body))
        bytes.putIntLE(4, 6)
        shouldThrow<WireFormatException> { decodeMsg(bytes) }.message shouldContain "checksum"
    }

    test("unknown required flag bits are rejected, unknown optional bits ignored") {
        val bytes = OpMsgCodec.encode(OpMsg(1, 0, 0, body))
        bytes.putIntLE(16, 1 shl 5)
        shouldThrow<WireFormatException> { decodeMsg(bytes) }.message shouldContain "required flag"
        bytes.putIntLE(16, 1 shl 20)
        decodeMsg(bytes).body shouldBe body
        shouldThrow<WireFormatException> { OpMsgCodec.encode(OpMsg(1, 0, 1 shl 3, body)) }
    }

    test("an unknown section kind is rejected") {
        val bytes = OpMsgCodec.encode(OpMsg(1, 0, 0, body))
        bytes[20] = 2
        shouldThrow<WireFormatException> { decodeMsg(bytes) }.message shouldContain "section kind 2"
    }

    test("a message without a body section, or with two, is rejected") {
        val seqOnly = OpMsgCodec.encode(OpMsg(1, 0, 0, body, listOf(DocumentSequence("documents", docs))))
        // cut the kind-0 section out: header(16) + flags(4) + [kind 0 + body] + [kind 1 ...]
        val bodyLen = seqOnly.intLE(21)
        val noBody = seqOnly.copyOfRange(0, 20) + seqOnly.copyOfRange(21 + bodyLen, seqOnly.size)
        noBody.putIntLE(0, noBody.size)
        shouldThrow<WireFormatException> { decodeMsg(noBody) }.message shouldContain "no kind-0"
        val plain = OpMsgCodec.encode(OpMsg(1, 0, 0, body))
        val twice = plain + plain.copyOfRange(20, plain.size)
        twice.putIntLE(0, twice.size)
        shouldThrow<WireFormatException> { decodeMsg(twice) }.message shouldContain "more than one"
    }

    test("duplicate sequence identifiers are rejected on encode and decode") {
        shouldThrow<WireFormatException> {
            OpMsgCodec.encode(OpMsg(1, 0, 0, body, listOf(DocumentSequence("d", docs), DocumentSequence("d", docs))))
        }
        val one = OpMsgCodec.encode(OpMsg(1, 0, 0, body, listOf(DocumentSequence("d", docs))))
        val bodyLen = one.intLE(21)
        val seq = one.copyOfRange(21 + bodyLen, one.size)
        val dup = one + seq
        dup.putIntLE(0, dup.size)
        shouldThrow<WireFormatException> { decodeMsg(dup) }.message shouldContain "duplicate"
    }

    test("lengths that point past the message are rejected, never read") {
        val bytes = OpMsgCodec.encode(OpMsg(1, 0, 0, body, listOf(DocumentSequence("documents", docs))))
        val bodyLen = bytes.intLE(21)
        val a = bytes.copyOf().also { it.putIntLE(21, Int.MAX_VALUE) }
        shouldThrow<WireFormatException> { decodeMsg(a) }
        val b = bytes.copyOf().also { it.putIntLE(21 + bodyLen + 1, Int.MAX_VALUE) }
        shouldThrow<WireFormatException> { decodeMsg(b) }.message shouldContain "kind-1 section size"
        val c = bytes.copyOf().also { it.putIntLE(21 + bodyLen + 1, -5) }
        shouldThrow<WireFormatException> { decodeMsg(c) }
    }

    test("malformed BSON inside a valid length is a WireFormatException") {
        val bytes = OpMsgCodec.encode(OpMsg(1, 0, 0, body))
        bytes[25] = 0x7f // element type of the first field: not a BSON type
        shouldThrow<WireFormatException> { decodeMsg(bytes) }.message shouldContain "malformed BSON"
    }

    test("random corruption only ever ends in WireFormatException") {
        val rnd = kotlin.random.Random(20261121)
        val good = OpMsgCodec.encode(
            OpMsg(9, 3, 0, body, listOf(DocumentSequence("documents", docs))),
        )
        repeat(3000) {
            val bad = good.copyOf()
            repeat(1 + rnd.nextInt(4)) { bad[16 + rnd.nextInt(bad.size - 16)] = rnd.nextInt(256).toByte() }
            val cut = if (rnd.nextInt(4) == 0) bad.copyOfRange(0, 16 + rnd.nextInt(bad.size - 16)) else bad
            cut.putIntLE(0, cut.size)
            try {
                decodeMsg(cut)
            } catch (_: WireFormatException) {
                // expected for most mutations
            }
        }
    }
})
