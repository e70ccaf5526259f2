package dev.mooring.driver.internal

import dev.mooring.driver.FindOptions
import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ClientSession
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.conversions.Bson
import kotlin.math.abs

/** The `find` command of crud.md's find helper and its cursor options. Stateless. */
internal object FindCommand {
    fun command(collection: String, filter: Bson, o: FindOptions, readConcern: ReadConcern, maxTimeMS: Long?): BsonDocument {
        val cmd = BsonDocument("find", BsonString(collection)).append("filter", filter.toDoc())
        cmd.optDoc("sort", o.sort).optDoc("projection", o.projection).opt("hint", o.hint)
        cmd.opt("skip", o.skip?.takeIf { it > 0 })
        val limit = o.limit?.let { abs(it) }?.takeIf { it > 0 }
        cmd.opt("limit", limit)
        // crud.md: limit == batchSize would leave an open cursor after the one full batch
        val batchSize = o.batchSize?.let { if (limit != null && it == limit) it + 1 else it }
        cmd.opt("batchSize", batchSize)
        if (o.limit != null && o.limit < 0) cmd["singleBatch"] = BsonBoolean.TRUE
        cmd.opt("comment", o.comment).opt("maxTimeMS", maxTimeMS).optRawData(o.rawData)
        cmd.optDoc("max", o.max).optDoc("min", o.min).opt("returnKey", o.returnKey).opt("showRecordId", o.showRecordId)
        when (o.cursorType) {
            CursorType.NON_TAILABLE -> Unit
            CursorType.TAILABLE -> cmd["tailable"] = BsonBoolean.TRUE
            CursorType.TAILABLE_AWAIT -> cmd.append("tailable", BsonBoolean.TRUE).append("awaitData", BsonBoolean.TRUE)
        }
        cmd.opt("noCursorTimeout", o.noCursorTimeout).opt("allowDiskUse", o.allowDiskUse)
        cmd.optDoc("collation", o.collation).optDoc("let", o.let)
        Concerns.applyReadConcern(cmd, readConcern)
        return cmd
    }

    fun cursorOptions(o: FindOptions, readPreference: ReadPreference, session: ClientSession?, defaults: Defaults): RunCursorCommandOptions =
        defaults.cursorOptions(
            readPreference, session, o.timeoutMode, o.batchSize, o.comment,
            cursorType = o.cursorType,
            maxTimeMS = if (o.cursorType == CursorType.TAILABLE_AWAIT) o.maxAwaitTimeMS else null,
        )

    /** The limit the cursor enforces (getMores ask for no more than the rest); null: none. */
    fun cursorLimit(o: FindOptions): Int? = o.limit?.let { abs(it) }?.takeIf { it > 0 }

}
