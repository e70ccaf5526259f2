package dev.mooring.cmap.connection

import dev.mooring.cmap.internal.connection.MessageBuffers
import dev.mooring.cmap.internal.connection.SendBufferPool
import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.MessageLimits
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.WireFormatException
import dev.mooring.cmap.internal.wire.compression.ZstdCompressor
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec

/** A connection's encode buffers: kept for usual messages, the factory's pool for large ones. */
class MessageBuffersSpec : FunSpec({
    val ping = BsonDocument("ping", BsonInt32(1))
    val big = RawBsonDocument(BsonDocument("text", BsonString("y".repeat(400_000))), BsonDocumentCodec())
    val insert = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(big, big)))

    fun opCode(bytes: ByteArray) = MessageHeader.parse(bytes, 48_000_000).opCode

    test("a usual message is encoded into the kept buffer, a large one into the pool's, given back once written") {
        val pool = SendBufferPool()
        val buffers = MessageBuffers(pool)
        buffers.prepare(1, 0, ping, null, MessageLimits.DEFAULT, null)
        val kept = buffers.outgoing!!
        buffers.isKept(kept) shouldBe true

        val length = buffers.prepare(2, 0, insert, null, MessageLimits.DEFAULT, null)
        val large = buffers.outgoing!!
        buffers.isKept(large) shouldBe false
        (length > 800_000) shouldBe true
        buffers.writing(large)
        buffers.written(large)
        pool.retainedCapacity shouldBeGreaterThan 800_000L

        buffers.prepare(3, 0, insert, null, MessageLimits.DEFAULT, null)
        buffers.outgoing shouldBeSameInstanceAs large // the pool's buffer again
        buffers.prepare(4, 0, ping, null, MessageLimits.DEFAULT, null)
        buffers.outgoing shouldBeSameInstanceAs kept
    }

    test("compressed, the wrapping goes into its own buffer and the large message's buffer goes back at once") {
        val pool = SendBufferPool()
        val buffers = MessageBuffers(pool)
        val n = buffers.prepare(1, 0, insert, null, MessageLimits.DEFAULT, ZstdCompressor)
        opCode(buffers.outgoing!!.internalBuffer.copyOf(n)) shouldBe OpCode.OP_COMPRESSED
        n shouldBeLessThan 100_000 // "yyy…" compresses
        pool.retainedCapacity shouldBeGreaterThan 800_000L // the encoded message's buffer, no longer needed
        // a command that must not be compressed is sent as it is
        val hello = buffers.prepare(2, 0, BsonDocument("hello", BsonInt32(1)), null, MessageLimits.DEFAULT, ZstdCompressor)
        opCode(buffers.outgoing!!.internalBuffer.copyOf(hello)) shouldBe OpCode.OP_MSG
    }

    test("a message that fails to encode after growing the kept buffer does not leave the connection keeping a large buffer") {
        val buffers = MessageBuffers(null)
        val limits = MessageLimits(maxBsonObjectSize = 100_000)
        val tooLarge = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("text", BsonString("z".repeat(300_000))))))
        shouldThrow<WireFormatException> { buffers.prepare(1, 0, tooLarge, null, limits, null) }
        buffers.prepare(2, 0, ping, null, limits, null)
        buffers.outgoing!!.internalBuffer.size shouldBeLessThan 64 * 1024
        buffers.isKept(buffers.outgoing!!) shouldBe true
    }
})
