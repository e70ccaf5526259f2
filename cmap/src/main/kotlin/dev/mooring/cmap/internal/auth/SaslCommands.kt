package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/** The SASL commands of auth.md ("SASL Mechanisms") and their replies. Stateless. */
internal object SaslCommands {
    /** `{saslStart: 1, mechanism, payload}` (callers add `autoAuthorize` or `options`). */
    fun saslStart(mechanism: String, payload: ByteArray): BsonDocument =
        BsonDocument("saslStart", BsonInt32(1))
            .append("mechanism", BsonString(mechanism))
            .append("payload", BsonBinary(payload))

    /** `{saslContinue: 1, conversationId, payload}`. */
    fun saslContinue(conversationId: BsonValue, payload: ByteArray): BsonDocument =
        BsonDocument("saslContinue", BsonInt32(1))
            .append("conversationId", conversationId)
            .append("payload", BsonBinary(payload))

    /** The reply's payload as bytes (binary, or a string for old servers). */
    fun payloadOf(reply: BsonDocument): ByteArray {
        val p = reply["payload"] ?: throw AuthFailure("the server's reply has no payload")
        return when {
            p.isBinary -> p.asBinary().data
            p.isString -> p.asString().value.toByteArray(Charsets.UTF_8)
            else -> throw AuthFailure("the server's payload is a ${p.bsonType}, not binary")
        }
    }

    fun conversationId(reply: BsonDocument): BsonValue =
        reply["conversationId"] ?: throw AuthFailure("the server's reply has no conversationId")

    fun isDone(reply: BsonDocument): Boolean = reply["done"]?.let { it.isBoolean && it.asBoolean().value } == true

    /**
     * Runs a whole SASL conversation on [source]: `saslStart` with [first], then `saslContinue`
     * with what [respond] answers to each server payload until the server says `done`. At most
     * [maxSteps] continues, so a server that never finishes cannot loop forever.
     */
    suspend fun converse(
        connection: Connection,
        source: String,
        mechanism: String,
        first: ByteArray,
        maxSteps: Int = 10,
        respond: suspend (ByteArray) -> ByteArray,
    ): BsonDocument {
        var reply = connection.command(source, saslStart(mechanism, first).append("autoAuthorize", BsonInt32(1)))
        var steps = 0
        while (!isDone(reply)) {
            if (++steps > maxSteps) throw AuthFailure("the server did not finish the conversation after $maxSteps steps")
            val id = conversationId(reply)
            reply = connection.command(source, saslContinue(id, respond(payloadOf(reply))))
        }
        return reply
    }
}
