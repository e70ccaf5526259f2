package dev.mooring.driver

import org.bson.BsonBinary
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonTimestamp

/**
 * One change event of a change stream (change-streams.md `ChangeStreamDocument`), with the
 * changed document typed as the collection's documents ([T]). Every field but [resumeToken] may be
 * absent (null): which ones an event has depends on its [operationType] and on the pipeline (a
 * `$project` may reshape events; [raw] always holds the event as the server sent it, new fields
 * included). Immutable; safe to share between threads.
 */
public class ChangeStreamDocument<T : Any>(
    /** The event's `_id`: the resume token to resume after it (`resumeAfter`/`startAfter`). */
    public val resumeToken: BsonDocument,
    /** `insert`, `update`, `replace`, `delete`, `invalidate`, `drop`, `dropDatabase`, `rename`, ... or a value of a newer server (kept as sent). */
    public val operationType: String?,
    /** The namespace of the change. */
    public val ns: ChangeStreamNamespace?,
    /** A rename's new namespace. */
    public val to: ChangeStreamNamespace?,
    /** The `_id` (and shard key) of the changed document (`documentKey`). */
    public val documentKey: BsonDocument?,
    /** An update's delta (`updateDescription`). */
    public val updateDescription: UpdateDescription?,
    /** The document after the change (`fullDocument`, per the `fullDocument` option), decoded as [T]. */
    public val fullDocument: T?,
    /** The document before the change (`fullDocumentBeforeChange`, per the `fullDocumentBeforeChange` option), decoded as [T]. */
    public val fullDocumentBeforeChange: T?,
    /** The cluster time of the change (`clusterTime`). */
    public val clusterTime: BsonTimestamp?,
    /** The wall time of the change (`wallTime`, MongoDB 6.0+). */
    public val wallTime: BsonDateTime?,
    /** The collection's UUID (`collectionUUID`, with showExpandedEvents). */
    public val collectionUUID: BsonBinary?,
    /** The transaction number of a change made in a transaction (`txnNumber`). */
    public val txnNumber: Long?,
    /** The session of a change made in a transaction (`lsid`). */
    public val lsid: BsonDocument?,
    /** Which fragment of a split large event this is (`splitEvent`, with `$changeStreamSplitLargeEvent`). */
    public val splitEvent: SplitEvent?,
    /** The event as received, all fields included. */
    public val raw: BsonDocument,
) {
    override fun toString(): String = "ChangeStreamDocument($raw)"
}

/** A namespace of a change event: [db] and, for a collection's event, [coll]. Immutable. */
public data class ChangeStreamNamespace(val db: String, val coll: String?)

/**
 * An update's delta (`updateDescription`): fields set to new values, fields removed, arrays
 * truncated, and, for field names with dots or numbers, their [disambiguatedPaths]. Immutable.
 */
public data class UpdateDescription(
    val updatedFields: BsonDocument?,
    val removedFields: List<String>,
    val truncatedArrays: List<TruncatedArray>,
    val disambiguatedPaths: BsonDocument?,
)

/** An array of an update's delta truncated to [newSize] elements. Immutable. */
public data class TruncatedArray(val field: String, val newSize: Int)

/** Fragment [fragment] of [of] of a split event. Immutable. */
public data class SplitEvent(val fragment: Int, val of: Int)
