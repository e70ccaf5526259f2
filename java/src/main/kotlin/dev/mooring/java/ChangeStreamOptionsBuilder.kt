package dev.mooring.java

import dev.mooring.driver.ChangeStreamOptions
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonTimestamp
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [ChangeStreamOptions] from Java for the `watch` methods, one option at a time;
 * every option left unset keeps the [ChangeStreamOptions] default (not sent). Invalid values
 * (a negative batch size or maxAwaitTimeMS) fail in [build] with [IllegalArgumentException].
 *
 * ```java
 * JavaChangeStream<Person> changes = people.watch(List.of(),
 *     new ChangeStreamOptionsBuilder().fullDocument("updateLookup").resumeAfter(savedToken).build(), null);
 * ```
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class ChangeStreamOptionsBuilder {
    private var fullDocument: String? = null
    private var fullDocumentBeforeChange: String? = null
    private var resumeAfter: BsonDocument? = null
    private var startAfter: BsonDocument? = null
    private var startAtOperationTime: BsonTimestamp? = null
    private var showExpandedEvents: Boolean? = null
    private var batchSize: Int? = null
    private var maxAwaitTimeMS: Long? = null
    private var comment: BsonValue? = null
    private var collation: Bson? = null

    /** `default`, `updateLookup`, `whenAvailable` or `required`: whether events carry the document after the change. */
    public fun fullDocument(fullDocument: String): ChangeStreamOptionsBuilder = apply { this.fullDocument = fullDocument }

    /** `whenAvailable`, `required` or `off`: whether events carry the document before the change. */
    public fun fullDocumentBeforeChange(fullDocumentBeforeChange: String): ChangeStreamOptionsBuilder =
        apply { this.fullDocumentBeforeChange = fullDocumentBeforeChange }

    /** Start with the event after this resume token (a stored [JavaChangeStream.getResumeToken]). */
    public fun resumeAfter(token: BsonDocument): ChangeStreamOptionsBuilder = apply { resumeAfter = token }

    /** Start with the event after this resume token, even past an `invalidate`. */
    public fun startAfter(token: BsonDocument): ChangeStreamOptionsBuilder = apply { startAfter = token }

    /** Start with the events at or after this cluster time. */
    public fun startAtOperationTime(time: BsonTimestamp): ChangeStreamOptionsBuilder = apply { startAtOperationTime = time }

    /** Also report the expanded events (createIndexes, dropIndexes, modify, create, ...). */
    public fun showExpandedEvents(show: Boolean): ChangeStreamOptionsBuilder = apply { showExpandedEvents = show }

    /** Events per batch (not negative). */
    public fun batchSize(batchSize: Int): ChangeStreamOptionsBuilder = apply { this.batchSize = batchSize }

    /** How long each getMore waits on the server for an event (not negative; below a positive timeoutMS). */
    public fun maxAwaitTimeMS(maxAwaitTimeMS: Long): ChangeStreamOptionsBuilder = apply { this.maxAwaitTimeMS = maxAwaitTimeMS }

    /** A comment attached to the aggregate (and, from MongoDB 4.4 on, its getMores). */
    public fun comment(comment: BsonValue): ChangeStreamOptionsBuilder = apply { this.comment = comment }

    /** A comment attached to the aggregate (and, from MongoDB 4.4 on, its getMores). */
    public fun comment(comment: String): ChangeStreamOptionsBuilder = comment(BsonString(comment))

    /** The collation. */
    public fun collation(collation: Bson): ChangeStreamOptionsBuilder = apply { this.collation = collation }

    /** The options. */
    public fun build(): ChangeStreamOptions = ChangeStreamOptions(
        fullDocument, fullDocumentBeforeChange, resumeAfter, startAfter, startAtOperationTime,
        showExpandedEvents, batchSize, maxAwaitTimeMS, comment, collation,
    )
}
