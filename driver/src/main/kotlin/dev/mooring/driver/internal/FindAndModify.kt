package dev.mooring.driver.internal

import dev.mooring.driver.FindOneAndDeleteOptions
import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.MongoWriteConcernException
import dev.mooring.driver.ReturnDocument
import dev.mooring.driver.Update
import dev.mooring.sdam.ClientSession
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.conversions.Bson

/**
 * findOneAndUpdate / findOneAndReplace / findOneAndDelete: one `findAndModify` command, a
 * retryable write; the reply's `value` decoded (null when nothing matched), a writeConcernError
 * thrown as [MongoWriteConcernException]. Immutable.
 */
internal class FindAndModify<T : Any>(private val defaults: Defaults, private val collection: String, private val codec: DocumentCodec<T>) {
    suspend fun update(filter: Bson, update: Update, o: FindOneAndUpdateOptions, session: ClientSession?): T? {
        val cmd = base(filter, o.sort, o.projection, o.collation, o.hint, o.maxTimeMS, o.let, o.comment, o.rawData)
            .append("update", WriteStatements.updateValue(update))
            .append("new", BsonBoolean.valueOf(o.returnDocument == ReturnDocument.AFTER))
        cmd.opt("upsert", o.upsert).opt("bypassDocumentValidation", o.bypassDocumentValidation)
        o.arrayFilters?.let { cmd["arrayFilters"] = it.toArray() }
        return run(cmd, session)
    }

    suspend fun replace(filter: Bson, replacement: T, o: FindOneAndReplaceOptions, session: ClientSession?): T? {
        val raw = codec.encode(replacement)
        WriteStatements.checkReplacement(raw)
        val deadline = MultiCommandDeadline(defaults)
        val limits = defaults.limits.get(defaults.cluster, deadline.next())
        require(raw.sizeInBytes <= limits.maxBsonObjectSize) { "the replacement is ${raw.sizeInBytes} bytes, larger than the server's maxBsonObjectSize ${limits.maxBsonObjectSize}" }
        val cmd = base(filter, o.sort, o.projection, o.collation, o.hint, o.maxTimeMS, o.let, o.comment, o.rawData)
            .append("update", raw)
            .append("new", BsonBoolean.valueOf(o.returnDocument == ReturnDocument.AFTER))
        cmd.opt("upsert", o.upsert).opt("bypassDocumentValidation", o.bypassDocumentValidation)
        return run(cmd, session, deadline, limits)
    }

    suspend fun delete(filter: Bson, o: FindOneAndDeleteOptions, session: ClientSession?): T? {
        val cmd = base(filter, o.sort, o.projection, o.collation, o.hint, o.maxTimeMS, o.let, o.comment, o.rawData).append("remove", BsonBoolean.TRUE)
        return run(cmd, session)
    }

    private fun base(filter: Bson, sort: Bson?, projection: Bson?, collation: Bson?, hint: dev.mooring.driver.Hint?, maxTimeMS: Long?, let: Bson?, comment: org.bson.BsonValue?, rawData: dev.mooring.driver.RawData?): BsonDocument {
        val cmd = BsonDocument("findAndModify", BsonString(collection)).append("query", filter.toDoc())
        cmd.optDoc("sort", sort).optDoc("fields", projection).optDoc("collation", collation).opt("hint", hint)
        cmd.opt("maxTimeMS", defaults.legacyMaxTimeMS(maxTimeMS)).optDoc("let", let).opt("comment", comment).optRawData(rawData)
        return cmd
    }

    private suspend fun run(cmd: BsonDocument, session: ClientSession?, deadline: MultiCommandDeadline = MultiCommandDeadline(defaults), known: ServerLimits? = null): T? {
        val unacknowledged = Concerns.isUnacknowledged(defaults.writeConcern) && session?.isInTransaction != true
        if (unacknowledged && cmd.containsKey("hint")) {
            (known ?: defaults.limits.get(defaults.cluster, deadline.next())).checkUnacknowledgedHint(true, true)
        }
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, defaults.cluster.settings.writeConcern, defaults.timeoutSet)
        val reply = defaults.cluster.runRetryableWrite(defaults.databaseName, cmd, session, deadline.next())
        WriteReplies.writeConcernError(reply)?.let { wce ->
            throw MongoWriteConcernException(wce, null, "${defaults.databaseName}.$collection").apply {
                WriteReplies.errorLabels(reply).forEach { addErrorLabel(it) }
            }
        }
        val value = reply["value"]?.takeIf { it.isDocument }?.asDocument() ?: return null
        return codec.decode(value)
    }
}
