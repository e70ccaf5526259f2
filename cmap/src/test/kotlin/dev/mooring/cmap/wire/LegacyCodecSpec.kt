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

    test("random corruption of OP_QUERY and OP_REPLY only ever ends in WireFormatException") {
        val rnd = kotlin.random.Random(7)
        val samples = listOf(
            OpQuery.encode(OpQuery(1, 0, "admin.\$cmd", 0, -1, hello)),
            OpReply.encode(OpReply(2, 1, 0, 0, 0, listOf(hello, BsonDocument("ok", BsonInt32(1))))),
        )
        repeat(2000) {
            val good = samples[it % 2]
            val bad = good.copyOf()
            repeat(1 + rnd.nextInt(4)) { bad[16 + rnd.nextInt(bad.size - 16)] = rnd.nextInt(256).toByte() }
            val cut = if (rnd.nextInt(4) == 0) bad.copyOfRange(0, 16 + rnd.nextInt(bad.size - 16)) else bad
            cut.putIntLE(0, cut.size)
            val h = MessageHeader.parse(cut, 48_000_000)
            try {
                if (h.opCode == OpCode.OP_QUERY) OpQuery.decode(h, cut.copyOfRange(16, cut.size)) else OpReply.decode(h, cut.copyOfRange(16, cut.size))
            } catch (_: WireFormatException) {
                // expected for most mutations
            }
        }
    }

    test("request ids are positive and unique across threads") {
        val ids = withContext(Dispatchers.Default) {
            (1..8).map { async { List(2000) { RequestIds.next() } } }.awaitAll().flatten()
        }
        ids.toSet() shouldHaveSize ids.size
        ids.min() shouldBeGreaterThan 0
    }
})
