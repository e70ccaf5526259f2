package dev.mooring.java

import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.Hint
import dev.mooring.driver.ReturnDocument
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [FindOneAndUpdateOptions] from Java, one option at a time; every option left
 * unset keeps the [FindOneAndUpdateOptions] default (the document before the change, nothing else sent).
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class FindOneAndUpdateOptionsBuilder {
    private var options = FindOneAndUpdateOptions()

    /** Filters choosing the array elements an update operator changes. */
    public fun arrayFilters(arrayFilters: List<Bson>): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(arrayFilters = arrayFilters) }

    /** Skips document validation. */
    public fun bypassDocumentValidation(bypass: Boolean): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(bypassDocumentValidation = bypass) }

    /** The collation. */
    public fun collation(collation: Bson): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(collation = collation) }

    /** The index to use, by name. */
    public fun hint(indexName: String): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(hint = Hint.Name(indexName)) }

    /** The index to use, by key pattern. */
    public fun hint(keys: BsonDocument): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(hint = Hint.Keys(keys)) }

    /** Server-side time limit (deprecated by timeoutMS). */
    public fun maxTimeMS(maxTimeMS: Long): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(maxTimeMS = maxTimeMS) }

    /** The fields of the returned document. */
    public fun projection(projection: Bson): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(projection = projection) }

    /** Which version is returned. */
    public fun returnDocument(returnDocument: ReturnDocument): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(returnDocument = returnDocument) }

    /** Which of the matching documents is updated. */
    public fun sort(sort: Bson): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(sort = sort) }

    /** Inserts a document when none matches. */
    public fun upsert(upsert: Boolean): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(upsert = upsert) }

    /** Variables for the filter and update (`let`). */
    public fun let(let: Bson): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(let = let) }

    /** A comment attached to the command. */
    public fun comment(comment: BsonValue): FindOneAndUpdateOptionsBuilder = apply { options = options.copy(comment = comment) }

    /** The options. */
    public fun build(): FindOneAndUpdateOptions = options
}
