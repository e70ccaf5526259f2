package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.DocumentSequence
import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.MessageLimits
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.WireFormatException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonString

class SizeLimitSpec : FunSpec({
    fun blob(size: Int) = BsonDocument("b", BsonBinary(ByteArray(size)))
    val limits = MessageLimits(maxBsonObjectSize = 1000, maxMessageSizeBytes = 4000)
    val cmd = BsonDocument("insert", BsonString("c"))

    test("a sequence document over maxBsonObjectSize fails before any bytes exist") {
        shouldThrow<WireFormatException> {
            OpMsgCodec.encode(OpMsg(1, 0, 0, cmd, listOf(DocumentSequence("documents", listOf(blob(1000))))), limits)
        }.message shouldContain "larger than the limit of 1000"
    }

    test("a command body may exceed maxBsonObjectSize by the 16 KiB command overhead, not more") {
        val big = MessageLimits(maxBsonObjectSize = 1000, maxMessageSizeBytes = 48_000_000)
        decodeMsg(OpMsgCodec.encode(OpMsg(1, 0, 0, blob(1000 + 10_000)), big)).body shouldBe blob(1000 + 10_000)
        shouldThrow<WireFormatException> { OpMsgCodec.encode(OpMsg(1, 0, 0, blob(1000 + MessageLimits.COMMAND_OVERHEAD)), big) }
    }

    test("a message over maxMessageSizeBytes fails even when every document is small") {
        val docs = (1..10).map { blob(500) }
        shouldThrow<WireFormatException> {
            OpMsgCodec.encode(OpMsg(1, 0, 0, cmd, listOf(DocumentSequence("documents", docs))), limits)
        }.message shouldContain "maxMessageSizeBytes"
        OpMsgCodec.encode(OpMsg(1, 0, 0, cmd, listOf(DocumentSequence("documents", docs.take(5)))), limits)
    }

    test("incoming messageLength below 16 or above the limit is rejected from the header alone") {
        fun header(len: Int) = ByteArray(16).also { it.putIntLE(0, len); it.putIntLE(12, 2013) }
        shouldThrow<WireFormatException> { MessageHeader.parse(header(15), 48_000_000) }.message shouldContain "less than"
        shouldThrow<WireFormatException> { MessageHeader.parse(header(-1), 48_000_000) }
        shouldThrow<WireFormatException> { MessageHeader.parse(header(48_000_001), 48_000_000) }.message shouldContain "larger"
        shouldThrow<WireFormatException> { MessageHeader.parse(header(Int.MAX_VALUE), 48_000_000) }
        MessageHeader.parse(header(48_000_000), 48_000_000).bodyLength shouldBe 48_000_000 - 16
        MessageHeader.parse(header(16), 48_000_000).bodyLength shouldBe 0
    }
})
