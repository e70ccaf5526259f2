package dev.mooring.java

import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.Hint
import dev.mooring.driver.ReturnDocument
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [FindOneAndReplaceOptions] from Java, one option at a time; every option left
 * unset keeps the [FindOneAndReplaceOptions] default (the document before the change, nothing else sent).
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class FindOneAndReplaceOptionsBuilder {
    private var options = FindOneAndReplaceOptions()

    /** Skips document validation. */
    public fun bypassDocumentValidation(bypass: Boolean): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(bypassDocumentValidation = bypass) }

    /** The collation. */
    public fun collation(collation: Bson): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(collation = collation) }

    /** The index to use, by name. */
    public fun hint(indexName: String): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(hint = Hint.Name(indexName)) }

    /** The index to use, by key pattern. */
    public fun hint(keys: BsonDocument): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(hint = Hint.Keys(keys)) }

    /** Server-side time limit (deprecated by timeoutMS). */
    public fun maxTimeMS(maxTimeMS: Long): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(maxTimeMS = maxTimeMS) }

    /** The fields of the returned document. */
    public fun projection(projection: Bson): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(projection = projection) }

    /** Which version is returned. */
    public fun returnDocument(returnDocument: ReturnDocument): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(returnDocument = returnDocument) }

    /** Which of the matching documents is replaced. */
    public fun sort(sort: Bson): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(sort = sort) }

    /** Inserts the replacement when nothing matches. */
    public fun upsert(upsert: Boolean): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(upsert = upsert) }

    /** Variables for the filter (`let`). */
    public fun let(let: Bson): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(let = let) }

    /** A comment attached to the command. */
    public fun comment(comment: BsonValue): FindOneAndReplaceOptionsBuilder = apply { options = options.copy(comment = comment) }

    /** The options. */
    public fun build(): FindOneAndReplaceOptions = options
}
