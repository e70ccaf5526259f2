package dev.mooring.java

import dev.mooring.driver.FindOptions
import dev.mooring.driver.Hint
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.TimeoutMode
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [FindOptions] from Java, one option at a time (the data class has 19
 * parameters); every option left unset keeps the [FindOptions] default (not sent).
 *
 * ```java
 * FindOptions options = new FindOptionsBuilder().sort(new BsonDocument("age", new BsonInt32(1))).batchSize(100).build();
 * ```
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class FindOptionsBuilder {
    private var options = FindOptions()

    /** Documents per batch (`batchSize`; not negative). */
    public fun batchSize(batchSize: Int): FindOptionsBuilder = apply { options = options.copy(batchSize = batchSize) }

    /** At most this many documents; negative: a single batch of at most `-limit`. */
    public fun limit(limit: Int): FindOptionsBuilder = apply { options = options.copy(limit = limit) }

    /** Documents to skip first (not negative). */
    public fun skip(skip: Int): FindOptionsBuilder = apply { options = options.copy(skip = skip) }

    /** The fields to return. */
    public fun projection(projection: Bson): FindOptionsBuilder = apply { options = options.copy(projection = projection) }

    /** The order of the results. */
    public fun sort(sort: Bson): FindOptionsBuilder = apply { options = options.copy(sort = sort) }

    /** The index to use, by name. */
    public fun hint(indexName: String): FindOptionsBuilder = apply { options = options.copy(hint = Hint.Name(indexName)) }

    /** The index to use, by key pattern. */
    public fun hint(keys: BsonDocument): FindOptionsBuilder = apply { options = options.copy(hint = Hint.Keys(keys)) }

    /** The collation. */
    public fun collation(collation: Bson): FindOptionsBuilder = apply { options = options.copy(collation = collation) }

    /** Variables for the filter (`let`). */
    public fun let(let: Bson): FindOptionsBuilder = apply { options = options.copy(let = let) }

    /** A comment attached to the command. */
    public fun comment(comment: BsonValue): FindOptionsBuilder = apply { options = options.copy(comment = comment) }

    /** A comment attached to the command. */
    public fun comment(comment: String): FindOptionsBuilder = comment(BsonString(comment))

    /** Server-side time limit (deprecated by timeoutMS; not combinable with it). */
    public fun maxTimeMS(maxTimeMS: Long): FindOptionsBuilder = apply { options = options.copy(maxTimeMS = maxTimeMS) }

    /** How long each getMore of a tailable-await cursor waits for new data. */
    public fun maxAwaitTimeMS(maxAwaitTimeMS: Long): FindOptionsBuilder = apply { options = options.copy(maxAwaitTimeMS = maxAwaitTimeMS) }

    /** Lets the server write temporary files for large sorts. */
    public fun allowDiskUse(allowDiskUse: Boolean): FindOptionsBuilder = apply { options = options.copy(allowDiskUse = allowDiskUse) }

    /** The cursor type. */
    public fun cursorType(cursorType: CursorType): FindOptionsBuilder = apply { options = options.copy(cursorType = cursorType) }

    /** Keeps an idle cursor open on the server. */
    public fun noCursorTimeout(noCursorTimeout: Boolean): FindOptionsBuilder = apply { options = options.copy(noCursorTimeout = noCursorTimeout) }

    /** Inclusive lower index bound; requires a hint. */
    public fun min(min: Bson): FindOptionsBuilder = apply { options = options.copy(min = min) }

    /** Exclusive upper index bound; requires a hint. */
    public fun max(max: Bson): FindOptionsBuilder = apply { options = options.copy(max = max) }

    /** Returns only the index keys. */
    public fun returnKey(returnKey: Boolean): FindOptionsBuilder = apply { options = options.copy(returnKey = returnKey) }

    /** Adds `$recordId` to each document. */
    public fun showRecordId(showRecordId: Boolean): FindOptionsBuilder = apply { options = options.copy(showRecordId = showRecordId) }

    /** How the collection's timeoutMS applies to the cursor. */
    public fun timeoutMode(timeoutMode: TimeoutMode): FindOptionsBuilder = apply { options = options.copy(timeoutMode = timeoutMode) }

    /** The options; [IllegalArgumentException] was thrown already by the setter of an invalid value. */
    public fun build(): FindOptions = options
}
