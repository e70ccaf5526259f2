package dev.mooring.driver

import org.bson.BsonDocument
import org.bson.BsonTimestamp
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The options of a change stream (change-streams.md `ChangeStreamOptions`); each one left null is
 * not sent. [fullDocument], [fullDocumentBeforeChange], [resumeAfter], [startAfter],
 * [startAtOperationTime] and [showExpandedEvents] go in the `$changeStream` stage; [batchSize],
 * [collation] and [comment] on the `aggregate` command ([comment] also on its getMores from
 * MongoDB 4.4 on); [maxAwaitTimeMS] is each getMore's `maxTimeMS`, how long the server waits for
 * an event. Unknown values of [fullDocument] and [fullDocumentBeforeChange] are passed on for the
 * server to judge, and so are conflicting start options (any two of [resumeAfter], [startAfter],
 * [startAtOperationTime]). Immutable; safe to share between threads.
 */
public data class ChangeStreamOptions(
    /** `default`, `updateLookup`, `whenAvailable` or `required`: whether events carry the document after the change. */
    val fullDocument: String? = null,
    /** `whenAvailable`, `required` or `off`: whether events carry the document before the change. */
    val fullDocumentBeforeChange: String? = null,
    /** Start with the event after this resume token. */
    val resumeAfter: BsonDocument? = null,
    /** Start with the event after this resume token, even past an `invalidate` (a dropped or renamed collection). */
    val startAfter: BsonDocument? = null,
    /** Start with the events at or after this cluster time. */
    val startAtOperationTime: BsonTimestamp? = null,
    /** Also report the expanded events (createIndexes, dropIndexes, modify, create, shardCollection, ...). */
    val showExpandedEvents: Boolean? = null,
    /** Events per batch (`cursor.batchSize` and each getMore's). */
    val batchSize: Int? = null,
    /** How long each getMore waits on the server for an event; must be below a positive timeoutMS. */
    val maxAwaitTimeMS: Long? = null,
    /** A comment attached to the aggregate (and, from MongoDB 4.4 on, its getMores). */
    val comment: BsonValue? = null,
    /** The collation. */
    val collation: Bson? = null,
) {
    init {
        require(batchSize == null || batchSize >= 0) { "batchSize must not be negative, got $batchSize" }
        require(maxAwaitTimeMS == null || maxAwaitTimeMS >= 0) { "maxAwaitTimeMS must not be negative, got $maxAwaitTimeMS" }
    }
}
