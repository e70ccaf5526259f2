package dev.mooring.sdam.internal.cursor

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoCursorProtocolException
import dev.mooring.sdam.MongoMissingCursorException
import org.bson.BsonDocument

/**
 * One batch of a cursor: the cursor [id] after it (0: exhausted on the server), its namespace
 * [ns] (`db.collection`) and the [documents]. Immutable; built from replies by [first] and [next].
 */
internal class CursorBatch(
    val id: Long,
    val ns: String,
    val documents: List<BsonDocument>,
    /** The batch's `postBatchResumeToken` (a change stream's, change-streams.md), or null. */
    val postBatchResumeToken: BsonDocument? = null,
) {
    companion object {
        /** The batch of the reply to the cursor-opening command [commandName] on [address]. */
        fun first(commandName: String, reply: BsonDocument, address: ServerAddress): CursorBatch {
            val cursor = reply["cursor"]?.takeIf { it.isDocument }?.asDocument() ?: throw MongoMissingCursorException(commandName, address)
            return parse(cursor, "firstBatch", address)
        }

        /** The batch of a getMore reply for the cursor [id] on [ns]: another id (but 0) or namespace is a protocol error. */
        fun next(reply: BsonDocument, id: Long, ns: String, address: ServerAddress): CursorBatch {
            val cursor = reply["cursor"]?.takeIf { it.isDocument }?.asDocument()
                ?: throw MongoCursorProtocolException("getMore for cursor $id returned no cursor document", address)
            val batch = parse(cursor, "nextBatch", address)
            if (batch.id != 0L && batch.id != id) throw MongoCursorProtocolException("getMore for cursor $id on $ns returned cursor id ${batch.id}", address)
            if (batch.ns != ns) throw MongoCursorProtocolException("getMore for cursor $id on $ns returned namespace ${batch.ns}", address)
            return batch
        }

        private fun parse(cursor: BsonDocument, batchField: String, address: ServerAddress): CursorBatch {
            val id = cursor["id"]?.takeIf { it.isInt64 || it.isInt32 }?.asNumber()?.longValue()
                ?: throw MongoCursorProtocolException("cursor document without an integer id: $cursor", address)
            val ns = cursor["ns"]?.takeIf { it.isString }?.asString()?.value?.takeIf { '.' in it }
                ?: throw MongoCursorProtocolException("cursor document without a namespace 'db.collection': $cursor", address)
            val docs = cursor[batchField]?.takeIf { it.isArray }?.asArray()
                ?: throw MongoCursorProtocolException("cursor document without a $batchField array", address)
            if (docs.any { !it.isDocument }) throw MongoCursorProtocolException("$batchField holds a value that is not a document", address)
            return CursorBatch(id, ns, docs.map { it.asDocument() }, cursor["postBatchResumeToken"]?.takeIf { it.isDocument }?.asDocument())
        }
    }
}
