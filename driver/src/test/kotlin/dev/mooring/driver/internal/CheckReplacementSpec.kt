package dev.mooring.driver.internal

import io.kotest.assertions.throwables.shouldNotThrowAny
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import org.bson.BsonDocument
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec

class CheckReplacementSpec : FunSpec({
    fun raw(json: String) = RawBsonDocument(BsonDocument.parse(json), BsonDocumentCodec())

    /** [json]'s bytes inside a larger array, after bytes that hold a '$' where a document at 0 would have its first key. */
    fun slice(json: String): RawBsonDocument {
        val bytes = raw(json).let { it.byteBuffer.array().copyOfRange(it.byteBuffer.position(), it.byteBuffer.limit()) }
        val prefix = ByteArray(9) { '$'.code.toByte() }
        return RawBsonDocument(prefix + bytes, prefix.size, bytes.size)
    }

    test("a replacement whose first key is an operator is refused, from its bytes as from a document") {
        for (d in listOf(raw("{\$set: {a: 1}}"), slice("{\$set: {a: 1}}"), BsonDocument.parse("{\$set: {a: 1}}"), slice("{\$x: 1, b: 2}"))) {
            shouldThrow<IllegalArgumentException> { WriteStatements.checkReplacement(d) }.message shouldContain "update operators (first key '$"
        }
    }

    test("an empty replacement, and one with '$' anywhere but at the start of its first key, is taken") {
        for (json in listOf("{}", "{a: '\$x'}", "{'a\$': 1}", "{a: 1, \$b: 2}", "{a: {\$set: 1}}")) {
            shouldNotThrowAny {
                WriteStatements.checkReplacement(raw(json))
                WriteStatements.checkReplacement(slice(json))
                WriteStatements.checkReplacement(BsonDocument.parse(json))
            }
        }
    }
})
