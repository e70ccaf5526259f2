package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpQuery
import dev.mooring.cmap.internal.wire.OpReply
import dev.mooring.cmap.internal.wire.RequestIds
import dev.mooring.cmap.internal.wire.WireFormatException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.withContext
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32

class LegacyCodecSpec : FunSpec({
    val hello = BsonDocument("isMaster", BsonInt32(1)).append("helloOk", BsonBoolean.TRUE)

    test("OP_QUERY round-trips") {
        val q = OpQuery(11, 0, "admin.\$cmd", 0, -1, hello)
        val bytes = OpQuery.encode(q)
        val h = MessageHeader.parse(bytes, 48_000_000)
        h.opCode shouldBe OpCode.OP_QUERY
        val back = OpQuery.decode(h, bytes.copyOfRange(16, bytes.size))
        back shouldBe q
        back.database shouldBe "admin"
    }

    test("OP_REPLY round-trips and checks numberReturned against the documents") {
        val r = OpReply(3, 11, OpReply.AWAIT_CAPABLE, 0, 0, listOf(BsonDocument("ok", BsonInt32(1))))
        val bytes = OpReply.encode(r)
        val h = MessageHeader.parse(bytes, 48_000_000)
        OpReply.decode(h, bytes.copyOfRange(16, bytes.size)) shouldBe r
        val wrongCount = bytes.copyOf().also { it.putIntLE(16 + 4 + 8 + 4, 1_000_000) }
        shouldThrow<WireFormatException> { OpReply.decode(h, wrongCount.copyOfRange(16, bytes.size)) }.message shouldContain "numberReturned"
        val negative = bytes.copyOf().also { it.putIntLE(16 + 4 + 8 + 4, -1) }
        shouldThrow<WireFormatException> { OpReply.decode(h, negative.copyOfRange(16, bytes.size)) }
    }

    test("an OP_REPLY decoded as OP_QUERY (and vice versa) is rejected") {
        val bytes = OpReply.encode(OpReply(3, 11, 0, 0, 0, emptyList()))
        val h = MessageHeader.parse(bytes, 48_000_000)
        shouldThrow<WireFormatException> { OpQuery.decode(h, bytes.copyOfRange(16, bytes.size)) }
    }

    test("request ids are positive and unique across threads") {
        val ids = withContext(Dispatchers.Default) {
            (1..8).map { async { List(2000) { RequestIds.next() } } }.awaitAll().flatten()
        }
        ids.toSet() shouldHaveSize ids.size
        ids.min() shouldBeGreaterThan 0
    }
})
