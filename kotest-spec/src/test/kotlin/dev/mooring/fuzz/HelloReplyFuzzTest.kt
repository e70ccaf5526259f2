package dev.mooring.fuzz

import com.code_intelligence.jazzer.api.FuzzedDataProvider
import com.code_intelligence.jazzer.junit.FuzzTest
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerDescription
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonNull
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.types.ObjectId

/**
 * Fuzz targets for hello-reply parsing into [ServerDescription]: any reply gives a description
 * (Unknown with an error for a malformed one), never an exception.
 */
class HelloReplyFuzzTest {
    private val address = ServerAddress("127.0.0.1", 27017)

    /** Raw BSON bytes from the wire (only well-formed documents reach the parser). */
    @FuzzTest(maxDuration = "60s")
    fun rawBson(bytes: ByteArray) {
        val doc = try {
            RawBsonDocument(bytes).let { BsonDocument().apply { putAll(it) } }
        } catch (_: RuntimeException) {
            return // not a document: the wire decoder rejects it before hello parsing
        }
        parse(doc)
    }

    /** Structured replies: the hello fields with values of any BSON type. */
    @FuzzTest(maxDuration = "60s")
    fun structured(data: FuzzedDataProvider) {
        val doc = BsonDocument()
        val fields = data.consumeInt(0, 24)
        repeat(fields) { doc[data.pickValue(HELLO_FIELDS)] = value(data, depth = 0) }
        parse(doc)
    }

    private fun parse(doc: BsonDocument) {
        val d = ServerDescription.fromHello(address, doc, 1.0, 1.0, 0L)
        check(d.address == address) { "description for the wrong address" }
    }

    private fun value(data: FuzzedDataProvider, depth: Int): BsonValue = when (data.consumeInt(0, if (depth > 2) 9 else 11)) {
        0 -> BsonInt32(data.consumeInt())
        1 -> BsonInt64(data.consumeLong())
        2 -> BsonDouble(data.consumeDouble())
        3 -> BsonBoolean(data.consumeBoolean())
        4 -> BsonString(data.consumeString(64))
        5 -> BsonString("${data.consumeString(32)}:${data.consumeInt(-5, 70000)}")
        6 -> BsonNull.VALUE
        7 -> BsonDateTime(data.consumeLong())
        8 -> BsonObjectId(ObjectId(data.consumeBytes(12).copyOf(12)))
        9 -> BsonBinary(data.consumeBytes(16))
        10 -> BsonArray((0 until data.consumeInt(0, 8)).map { value(data, depth + 1) })
        else -> BsonDocument().apply { repeat(data.consumeInt(0, 6)) { put(data.pickValue(HELLO_FIELDS), value(data, depth + 1)) } }
    }

    private companion object {
        val HELLO_FIELDS = listOf(
            "ok", "isWritablePrimary", "ismaster", "helloOk", "secondary", "arbiterOnly", "hidden", "passive", "msg",
            "setName", "setVersion", "electionId", "primary", "me", "hosts", "passives", "arbiters", "tags",
            "minWireVersion", "maxWireVersion", "maxBsonObjectSize", "maxMessageSizeBytes", "maxWriteBatchSize",
            "logicalSessionTimeoutMinutes", "topologyVersion", "processId", "counter", "lastWrite", "lastWriteDate",
            "opTime", "isreplicaset", "serviceId", "connectionId", "compression", "saslSupportedMechs", "errmsg", "code",
        )
    }
}
