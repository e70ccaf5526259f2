package dev.mooring.driver.internal

import dev.mooring.driver.CountOptions
import dev.mooring.driver.EstimatedDocumentCountOptions
import dev.mooring.driver.ReadConcern
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.conversions.Bson

/** countDocuments' aggregate and estimatedDocumentCount's `count` (crud.md). Stateless. */
internal object CountCommands {
    /** `[{$match: filter}, {$skip}, {$limit}, {$group: {_id: 1, n: {$sum: 1}}}]` as an aggregate. */
    fun countDocuments(collection: String, filter: Bson, o: CountOptions, readConcern: ReadConcern, maxTimeMS: Long?): BsonDocument {
        val pipeline = BsonArray()
        pipeline += BsonDocument("\$match", filter.toDoc())
        o.skip?.let { pipeline += BsonDocument("\$skip", BsonInt64(it)) }
        o.limit?.let { pipeline += BsonDocument("\$limit", BsonInt64(it)) }
        pipeline += BsonDocument("\$group", BsonDocument("_id", BsonInt32(1)).append("n", BsonDocument("\$sum", BsonInt32(1))))
        val cmd = BsonDocument("aggregate", BsonString(collection)).append("pipeline", pipeline).append("cursor", BsonDocument())
        cmd.optDoc("collation", o.collation).opt("hint", o.hint).opt("comment", o.comment).opt("maxTimeMS", maxTimeMS).optRawData(o.rawData)
        Concerns.applyReadConcern(cmd, readConcern)
        return cmd
    }

    /** The `n` of the aggregate's one document; 0 when the cursor is empty (an empty collection). */
    fun countOf(reply: BsonDocument): Long {
        val batch = reply.getDocument("cursor", BsonDocument()).getArray("firstBatch", BsonArray())
        val first = batch.firstOrNull()?.asDocument() ?: return 0
        return WriteReplies.count(first, "n")
    }

    fun count(collection: String, o: EstimatedDocumentCountOptions, readConcern: ReadConcern, maxTimeMS: Long?): BsonDocument {
        val cmd = BsonDocument("count", BsonString(collection))
        cmd.opt("maxTimeMS", maxTimeMS).opt("comment", o.comment).optRawData(o.rawData)
        Concerns.applyReadConcern(cmd, readConcern)
        return cmd
    }
}
