package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.CommandBody
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec

class CommandBodyCarriedBytesSpec : FunSpec({
    val big = RawBsonDocument(BsonDocument().apply { repeat(2_000) { append("f$it", BsonString("v$it")) } }, BsonDocumentCodec())
    val bigSize = big.byteBuffer.remaining()

    test("an insert's documents and a bulkWrite's ops documents count with their bytes when the first is large; other values do not") {
        val insert = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(big, big)))
        CommandBody.carriedBytes(insert) shouldBeGreaterThanOrEqual 2 * bigSize
        CommandBody.carriedBytes(insert) shouldBeLessThan 2 * bigSize + 1_000

        val bulk = BsonDocument("bulkWrite", BsonInt32(1))
            .append("ops", BsonArray(listOf(BsonDocument("insert", BsonInt32(0)).append("document", big), BsonDocument("delete", BsonInt32(0)).append("filter", BsonDocument()))))
            .append("nsInfo", BsonArray(listOf(BsonDocument("ns", BsonString("db.c")))))
        CommandBody.carriedBytes(bulk) shouldBeGreaterThanOrEqual bigSize
        CommandBody.carriedBytes(bulk) shouldBeLessThan bigSize + 1_000

        CommandBody.carriedBytes(BsonDocument("find", BsonString("c")).append("filter", big)) shouldBe 0
        CommandBody.carriedBytes(BsonDocument("ping", BsonInt32(1))) shouldBe 0
        CommandBody.carriedBytes(BsonDocument("aggregate", BsonString("c")).append("pipeline", BsonArray(listOf(BsonDocument("\$match", BsonDocument()))))) shouldBe 0
    }

    test("an array whose first document is small is estimated as that document's bytes times its length, at most maxMessageSizeBytes") {
        val small = RawBsonDocument(BsonDocument("a", BsonInt32(1)), BsonDocumentCodec())
        val smallSize = small.byteBuffer.remaining()
        val batch = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(List(10_000) { small }))
        CommandBody.carriedBytes(batch) shouldBeGreaterThanOrEqual 10_000 * smallSize
        CommandBody.carriedBytes(batch) shouldBeLessThan 10_000 * (smallSize + 100)
        // the estimate follows the first: a large one later in the batch is left to the buffer's growth
        CommandBody.carriedBytes(BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(small, big)))) shouldBeLessThan 1_000
        CommandBody.carriedBytes(batch, maxMessageSizeBytes = 4_096) shouldBe 4_096
        CommandBody.carriedBytes(BsonDocument("insert", BsonString("c")).append("documents", BsonArray(List(100) { big })), maxMessageSizeBytes = 48_000_000) shouldBeLessThan 48_000_001
    }
})
