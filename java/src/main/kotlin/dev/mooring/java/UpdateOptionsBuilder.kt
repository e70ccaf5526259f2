package dev.mooring.java

import dev.mooring.driver.Hint
import dev.mooring.driver.UpdateOptions
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [UpdateOptions] (updateOne, updateMany) from Java, one option at a time; every
 * option left unset keeps the [UpdateOptions] default (not sent).
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class UpdateOptionsBuilder {
    private var options = UpdateOptions()

    /** Filters choosing the array elements an update operator changes. */
    public fun arrayFilters(arrayFilters: List<Bson>): UpdateOptionsBuilder = apply { options = options.copy(arrayFilters = arrayFilters) }

    /** Skips document validation. */
    public fun bypassDocumentValidation(bypass: Boolean): UpdateOptionsBuilder = apply { options = options.copy(bypassDocumentValidation = bypass) }

    /** The collation. */
    public fun collation(collation: Bson): UpdateOptionsBuilder = apply { options = options.copy(collation = collation) }

    /** The index to use, by name. */
    public fun hint(indexName: String): UpdateOptionsBuilder = apply { options = options.copy(hint = Hint.Name(indexName)) }

    /** The index to use, by key pattern. */
    public fun hint(keys: BsonDocument): UpdateOptionsBuilder = apply { options = options.copy(hint = Hint.Keys(keys)) }

    /** Inserts a document when none matches. */
    public fun upsert(upsert: Boolean): UpdateOptionsBuilder = apply { options = options.copy(upsert = upsert) }

    /** Variables for the filter and update (`let`). */
    public fun let(let: Bson): UpdateOptionsBuilder = apply { options = options.copy(let = let) }

    /** A comment attached to the command. */
    public fun comment(comment: BsonValue): UpdateOptionsBuilder = apply { options = options.copy(comment = comment) }

    /** For updateOne only: which of the matching documents is updated (MongoDB 8.0+). */
    public fun sort(sort: Bson): UpdateOptionsBuilder = apply { options = options.copy(sort = sort) }

    /** The options. */
    public fun build(): UpdateOptions = options
}
