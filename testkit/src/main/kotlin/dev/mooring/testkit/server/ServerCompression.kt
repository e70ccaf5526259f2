package dev.mooring.testkit.server

import dev.mooring.testkit.wire.WireCompressor
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/** Server-side compression negotiation (OP_COMPRESSED.md "Compression negotiation"). Pure; thread-safe. */
internal object ServerCompression {
    /**
     * The compressors both sides support, in the client's order, for a hello [request] and the
     * server's [supported] list; empty when the client asked for none.
     */
    fun negotiate(request: BsonDocument, supported: List<String>): List<String> {
        val asked = (request["compression"] as? BsonArray)?.filter { it.isString }?.map { it.asString().value } ?: return emptyList()
        return asked.filter { it in supported && it in WireCompressor.NAMES }
    }

    /** [reply] with `compression` set to [agreed] (a copy). */
    fun answer(reply: BsonDocument, agreed: List<String>): BsonDocument =
        reply.clone().append("compression", BsonArray(agreed.map { BsonString(it) }))

    fun compressor(name: String): WireCompressor = requireNotNull(WireCompressor.byName(name)) { "no compressor '$name'" }
}
