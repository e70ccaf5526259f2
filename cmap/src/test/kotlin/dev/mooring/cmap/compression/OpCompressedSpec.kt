package dev.mooring.cmap.compression

import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpCompressed
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.WireFormatException
import dev.mooring.cmap.internal.wire.compression.Compressors
import dev.mooring.cmap.internal.wire.compression.NoopCompressor
import dev.mooring.cmap.internal.wire.compression.SnappyCompressor
import dev.mooring.cmap.internal.wire.compression.ZlibCompressor
import dev.mooring.cmap.internal.wire.compression.ZstdCompressor
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.property.Arb
import io.kotest.property.arbitrary.byte
import io.kotest.property.arbitrary.byteArray
import io.kotest.property.arbitrary.int
import io.kotest.property.checkAll
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.nio.ByteBuffer
import java.nio.ByteOrder

/** OP_COMPRESSED framing and the three compressors (OP_COMPRESSED.md). */
class OpCompressedSpec : FunSpec({
    val all = listOf(SnappyCompressor, ZlibCompressor(-1), ZlibCompressor(9), ZlibCompressor(0), ZstdCompressor, NoopCompressor)

    fun header(bytes: ByteArray) = MessageHeader.parse(bytes, 48_000_000)

    for (c in all) {
        test("${c.name} (${c}) round-trips arbitrary bytes") {
            checkAll(20, Arb.byteArray(Arb.int(0..3000), Arb.byte())) { data ->
                val dest = ByteArray(c.maxCompressedLength(data.size))
                c.decompress(dest.copyOf(c.compressInto(data, 0, data.size, dest, 0)), data.size).toList() shouldBe data.toList()
            }
        }

        test("${c.name} (${c}): compressInto writes within maxCompressedLength, from an offset into an offset, what decompresses to the input") {
            checkAll(20, Arb.byteArray(Arb.int(0..20_000), Arb.byte()), Arb.int(0..7)) { data, pad ->
                // random bytes do not compress: the worst case of the bound
                val source = ByteArray(pad) + data + ByteArray(pad)
                val dest = ByteArray(pad + c.maxCompressedLength(data.size))
                val n = c.compressInto(source, pad, data.size, dest, pad)
                (n <= c.maxCompressedLength(data.size)) shouldBe true
                c.decompress(dest.copyOfRange(pad, pad + n), data.size).toList() shouldBe data.toList()
            }
        }

        test("${c.name} (${c}): wrapInto wraps a message held in the first bytes of a larger buffer as wrap does") {
            val plain = OpMsgCodec.encode(OpMsg(77, 0, 0, BsonDocument("insert", BsonString("c")).append("x", BsonString("z".repeat(5000)))))
            val buffer = plain + ByteArray(100) { 9 }
            val dest = ByteArray(OpCompressed.maxWrappedLength(plain.size, c) + 10) { 5 }
            val n = OpCompressed.wrapInto(buffer, plain.size, c, dest)
            val wrapped = dest.copyOf(n)
            val h = header(wrapped)
            h.messageLength shouldBe n
            h.requestId shouldBe 77
            val u = OpCompressed.unwrap(h, wrapped.copyOfRange(16, n), 48_000_000)
            u.body.toList() shouldBe plain.copyOfRange(16, plain.size).toList()
            wrapped.toList() shouldBe OpCompressed.wrap(plain, c).toList()
        }

        test("${c.name}: a wrapped OP_MSG unwraps to the same message, ids kept") {
            val msg = OpMsg(1234, 99, 0, BsonDocument("find", BsonString("c")).append("x", BsonString("y".repeat(3000))))
            val plain = OpMsgCodec.encode(msg)
            val wrapped = OpCompressed.wrap(plain, c)
            val h = header(wrapped)
            h.opCode shouldBe OpCode.OP_COMPRESSED
            h.requestId shouldBe 1234
            h.responseTo shouldBe 99
            wrapped[MessageHeader.HEADER_LENGTH + 8].toInt() shouldBe c.id
            val u = OpCompressed.unwrap(h, wrapped.copyOfRange(16, wrapped.size), 48_000_000)
            u.header.opCode shouldBe OpCode.OP_MSG
            u.headerBytes.toList() shouldBe plain.copyOfRange(0, 16).toList()
            OpMsgCodec.decode(u.header, u.headerBytes, u.body).body shouldBe msg.body
        }

        if (c.id != 0) {
            test("${c.name}: an uncompressedSize that does not match the data is a protocol error") {
                val plain = OpMsgCodec.encode(OpMsg(1, 0, 0, BsonDocument("ping", BsonInt32(1))))
                val wrapped = OpCompressed.wrap(plain, c)
                for (delta in listOf(-1, 1, 100)) {
                    val bad = wrapped.copyOf()
                    val b = ByteBuffer.wrap(bad).order(ByteOrder.LITTLE_ENDIAN)
                    b.putInt(20, b.getInt(20) + delta)
                    shouldThrow<WireFormatException> { OpCompressed.unwrap(header(bad), bad.copyOfRange(16, bad.size), 48_000_000) }
                }
            }

            test("${c.name}: corrupt data is a protocol error") {
                val plain = OpMsgCodec.encode(OpMsg(1, 0, 0, BsonDocument("ping", BsonInt32(1)).append("pad", BsonString("z".repeat(500)))))
                val wrapped = OpCompressed.wrap(plain, c)
                val bad = wrapped.copyOf(25 + (wrapped.size - 25) / 2)
                ByteBuffer.wrap(bad).order(ByteOrder.LITTLE_ENDIAN).putInt(0, bad.size)
                shouldThrow<WireFormatException> { OpCompressed.unwrap(header(bad), bad.copyOfRange(16, bad.size), 48_000_000) }
            }
        }
    }

    test("an unknown compressorId is a protocol error") {
        val wrapped = OpCompressed.wrap(OpMsgCodec.encode(OpMsg(1, 0, 0, BsonDocument("ping", BsonInt32(1)))), ZstdCompressor)
        wrapped[24] = 7
        val e = shouldThrow<WireFormatException> { OpCompressed.unwrap(header(wrapped), wrapped.copyOfRange(16, wrapped.size), 48_000_000) }
        e.message shouldContain "compressorId 7"
    }

    test("a negative or oversized uncompressedSize and nested OP_COMPRESSED are refused before decompressing") {
        val wrapped = OpCompressed.wrap(OpMsgCodec.encode(OpMsg(1, 0, 0, BsonDocument("ping", BsonInt32(1)))), ZlibCompressor())
        val neg = wrapped.copyOf().also { ByteBuffer.wrap(it).order(ByteOrder.LITTLE_ENDIAN).putInt(20, -5) }
        shouldThrow<WireFormatException> { OpCompressed.unwrap(header(neg), neg.copyOfRange(16, neg.size), 48_000_000) }
        val huge = wrapped.copyOf().also { ByteBuffer.wrap(it).order(ByteOrder.LITTLE_ENDIAN).putInt(20, 2_000_000_000) }
        shouldThrow<WireFormatException> { OpCompressed.unwrap(header(huge), huge.copyOfRange(16, huge.size), 48_000_000) }
        val nested = wrapped.copyOf().also { ByteBuffer.wrap(it).order(ByteOrder.LITTLE_ENDIAN).putInt(16, OpCode.OP_COMPRESSED) }
        shouldThrow<WireFormatException> { OpCompressed.unwrap(header(nested), nested.copyOfRange(16, nested.size), 48_000_000) }
    }

    test("the commands OP_COMPRESSED.md lists are never compressed; others are") {
        for (name in listOf("hello", "isMaster", "saslStart", "saslContinue", "getnonce", "authenticate", "createUser", "updateUser",
            "copydbSaslStart", "copydbgetnonce", "copydb")) {
            OpCompressed.mayCompress(name) shouldBe false
        }
        for (name in listOf("find", "insert", "ping", "aggregate", "endSessions")) OpCompressed.mayCompress(name) shouldBe true
    }

    test("compressors are found by name and id") {
        Compressors.NAMES shouldBe listOf("snappy", "zlib", "zstd")
        Compressors.byName("zlib", 6) shouldBe ZlibCompressor(6)
        Compressors.byName("lz4") shouldBe null
        Compressors.byId(1) shouldBe SnappyCompressor
        Compressors.byId(3) shouldBe ZstdCompressor
        Compressors.byId(4) shouldBe null
        // the level's rule lives with the settings (ConnectionSettingsRules); the JDK's Deflater refuses it too
        dev.mooring.cmap.internal.connection.ConnectionSettingsRules.check(dev.mooring.cmap.ConnectionSettings(zlibCompressionLevel = 10)) shouldBe
            "zlibCompressionLevel must be in -1..9, was 10"
        shouldThrow<IllegalArgumentException> { ZlibCompressor(10).compressInto(ByteArray(16), 0, 16, ByteArray(64), 0) }
    }
})
