package dev.mooring.driver.internal

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonTimestamp
import org.bson.conversions.Bson

/**
 * What a change stream watches and how its `aggregate` is built (change-streams.md "Helper
 * Method"): a collection (`aggregate: name`), a database or the cluster (`aggregate: 1`, the
 * latter on `admin` with `allChangesForCluster`). Immutable.
 */
internal class ChangeStreamCommand(
    private val defaults: Defaults,
    /** The collection watched, or null for a database or the cluster. */
    private val collection: String?,
    private val allChangesForCluster: Boolean,
    private val pipeline: List<Bson>,
    val options: ChangeStreamOptions,
    private val session: ClientSession?,
) {
    val database: String get() = defaults.databaseName

    val cluster: MongoCluster get() = defaults.cluster

    /** Where the stream starts: the options' start ([original]), or the Resume Process's choice. */
    sealed interface Start {
        /** The options as given (the first open). */
        object Original : Start

        /** `resumeAfter` (or `startAfter` with [startAfter]) the cached token. */
        class AfterToken(val token: BsonDocument, val startAfter: Boolean) : Start

        /** `startAtOperationTime` (no token cached). */
        class AtOperationTime(val time: BsonTimestamp) : Start

        /** No start option: the original command without its start options (nothing cached). */
        object Now : Start
    }

    /** The `aggregate` command starting at [start]. */
    fun command(start: Start): BsonDocument {
        val stage = BsonDocument()
        if (allChangesForCluster) stage["allChangesForCluster"] = BsonBoolean.TRUE
        options.fullDocument?.let { stage["fullDocument"] = BsonString(it) }
        options.fullDocumentBeforeChange?.let { stage["fullDocumentBeforeChange"] = BsonString(it) }
        when (start) {
            Start.Original -> {
                options.resumeAfter?.let { stage["resumeAfter"] = it }
                options.startAfter?.let { stage["startAfter"] = it }
                options.startAtOperationTime?.let { stage["startAtOperationTime"] = it }
            }
            is Start.AfterToken -> stage[if (start.startAfter) "startAfter" else "resumeAfter"] = start.token
            is Start.AtOperationTime -> stage["startAtOperationTime"] = start.time
            Start.Now -> Unit
        }
        options.showExpandedEvents?.let { stage["showExpandedEvents"] = BsonBoolean.valueOf(it) }
        val stages = pipeline.toArray().apply { add(0, BsonDocument("\$changeStream", stage)) }
        val aggregate = AggregateOptions(batchSize = options.batchSize, collation = options.collation, comment = options.comment)
        val cmd = AggregateCommand.command(
            collection ?: "", stages, aggregate, defaults.readConcern, defaults.writeConcern, defaults.cluster.settings.writeConcern,
            defaults.timeoutSet, maxTimeMS = null,
        )
        if (collection == null) cmd["aggregate"] = BsonInt32(1)
        return cmd
    }

    /** The cursor options: tailable-await (ITERATION timeouts), getMores with `maxAwaitTimeMS` as their `maxTimeMS`. */
    fun cursorOptions(): RunCursorCommandOptions = defaults.cursorOptions(
        defaults.readPreference, session, timeoutMode = null, batchSize = options.batchSize, comment = options.comment,
        cursorType = CursorType.TAILABLE_AWAIT, maxTimeMS = options.maxAwaitTimeMS,
    )
}
